import type { APIGatewayProxyEvent } from "aws-lambda";
import type { Config } from "./config";
import { forbidden, unauthorized } from "./errors";

/**
 * Who is calling. In AWS the user comes from the authorizer (a JWT's `sub`, or the
 * authorizer's principal), never from anything the client or a model can choose.
 * The local stack has no authorizer: there the body's user_id or an x-user-id header
 * names the user, and "anonymous" when neither does.
 */
export function callerId(event: APIGatewayProxyEvent, mode: Config["AUTH_MODE"], bodyUserId?: string): string {
  if (mode === "local") return bodyUserId ?? event.headers?.["x-user-id"] ?? "anonymous";
  const authorizer = event.requestContext?.authorizer as
    { claims?: { sub?: string }; principalId?: string; userId?: string } | null | undefined;
  const id = authorizer?.claims?.sub ?? authorizer?.userId ?? authorizer?.principalId;
  if (!id) throw unauthorized();
  if (bodyUserId !== undefined && bodyUserId !== id) throw forbidden("user_id does not match the authenticated user");
  return id;
}
