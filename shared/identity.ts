import type { APIGatewayProxyEvent } from "aws-lambda";
import type { Config } from "./config";
import { badRequest, forbidden, unauthorized } from "./errors";
import { identifier } from "./text";

interface AuthorizerContext {
  claims?: { sub?: string };
  principalId?: string;
  userId?: string;
  /** set for an API key client (functions/authorizer.ts): its name, and "true" when trusted */
  client?: string;
  trusted?: string;
  /** "admin" for a JWT holding the configured admin group, or a trusted API key (functions/authorizer.ts) */
  role?: string;
}

/**
 * Who is calling. In AWS the user comes from the authorizer (a JWT's `sub`, or the
 * authorizer's principal), never from anything the client or a model can choose. The one
 * exception is a server-to-server client whose API key is marked trusted: it acts for its own
 * users, so it names the user in the body's user_id (or, without a body, an x-user-id header).
 * Any other API key client is itself the user. The local stack has no authorizer: there the
 * body's user_id or an x-user-id header names the user, and "anonymous" when neither does.
 */
export function callerId(event: APIGatewayProxyEvent, mode: Config["AUTH_MODE"], bodyUserId?: string): string {
  // Read only where it counts: an authenticated caller's stray header is ignored, not judged.
  const named = () => bodyUserId ?? headerUserId(event);
  if (mode === "local") return named() ?? "anonymous";
  const authorizer = event.requestContext?.authorizer as AuthorizerContext | null | undefined;
  if (authorizer?.client !== undefined && authorizer.trusted === "true") {
    const user = named();
    if (!user) throw badRequest("user_id_required", "a trusted API key must name the user in user_id or x-user-id");
    return user;
  }
  const id =
    authorizer?.client !== undefined
      ? `client:${authorizer.client}`
      : (authorizer?.claims?.sub ?? authorizer?.userId ?? authorizer?.principalId);
  if (!id) throw unauthorized();
  if (bodyUserId !== undefined && bodyUserId !== id) throw forbidden("user_id does not match the authenticated user");
  return id;
}

/**
 * Whether the caller administers the knowledge base. In AWS only the authorizer says so (a JWT in
 * the configured admin group, or a trusted API key); an `x-user-role` header counts only on the
 * local stack, where anyone can name any user anyway.
 */
export function isAdminCaller(event: APIGatewayProxyEvent, mode: Config["AUTH_MODE"]): boolean {
  if (mode === "local") return header(event, "x-user-role") === "admin";
  return (event.requestContext?.authorizer as AuthorizerContext | null | undefined)?.role === "admin";
}

/** x-user-id under the same rule as the body's user_id: storable text, at most 128 characters. */
function headerUserId(event: APIGatewayProxyEvent): string | undefined {
  const value = header(event, "x-user-id");
  if (value === undefined) return undefined;
  const parsed = identifier().safeParse(value);
  if (!parsed.success) throw badRequest("invalid_user_id", `x-user-id: ${parsed.error.issues[0]!.message}`);
  return parsed.data;
}

/** Header names are case-insensitive; API Gateway hands them over as the client spelled them. */
function header(event: APIGatewayProxyEvent, name: string): string | undefined {
  const entry = Object.entries(event.headers ?? {}).find(([key]) => key.toLowerCase() === name);
  return entry?.[1] || undefined;
}
