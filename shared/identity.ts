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

/** An untrusted API key's client is the user `client:<name>`; no JWT subject or trusted key's user may be one. */
export const API_KEY_USER_PREFIX = "client:";
/** Case aside too, so no user id reads like a key's client. */
export const isApiKeyUser = (userId: string) =>
  userId.slice(0, API_KEY_USER_PREFIX.length).toLowerCase() === API_KEY_USER_PREFIX;

/**
 * Who is calling. In AWS the user comes from the authorizer (a JWT's `sub`, or the
 * authorizer's principal), never from anything the client or a model can choose. The one
 * exception is a server-to-server client whose API key is marked trusted: it acts for the
 * deployment's users, so it names the user in an x-user-id header or, on routes whose body has
 * one, the body's user_id (never a `client:` id). Any other API key client is itself the user, and
 * a JWT's or that client's stray header is ignored, while a body user_id naming someone else is
 * 403. The local stack has no authorizer: there the body's user_id or an x-user-id header names
 * the user, and "anonymous" when neither does. Where both are read, naming two users is 400.
 */
export function callerId(event: APIGatewayProxyEvent, mode: Config["AUTH_MODE"], bodyUserId?: string): string {
  // Read only where it counts: an authenticated caller's stray header is ignored, not judged.
  const named = () => {
    const header = headerUserId(event);
    if (bodyUserId !== undefined && header !== undefined && header !== bodyUserId)
      throw badRequest("user_id_conflict", "user_id and x-user-id name different users");
    return bodyUserId ?? header;
  };
  if (mode === "local") return named() ?? "anonymous";
  const authorizer = event.requestContext?.authorizer as AuthorizerContext | null | undefined;
  if (authorizer?.client !== undefined && authorizer.trusted === "true") {
    const user = named();
    if (!user) throw badRequest("user_id_required", "a trusted API key must name the user in user_id or x-user-id");
    // A key's client is its own user: not one a trusted key acts for.
    if (isApiKeyUser(user))
      throw badRequest("invalid_user_id", `a user id starting with ${API_KEY_USER_PREFIX} is an API key's client`);
    return user;
  }
  const id =
    authorizer?.client !== undefined
      ? `${API_KEY_USER_PREFIX}${authorizer.client}`
      : (authorizer?.claims?.sub ?? authorizer?.userId ?? authorizer?.principalId);
  if (!id) throw unauthorized();
  if (bodyUserId !== undefined && bodyUserId !== id) throw forbidden("user_id does not match the authenticated user");
  return id;
}

/**
 * Who acts on an admin route: a trusted API key itself (`client:<name>`, it needs no user to
 * administer), anyone else as callerId says.
 */
export function adminActorId(event: APIGatewayProxyEvent, mode: Config["AUTH_MODE"]): string {
  const authorizer = event.requestContext?.authorizer as AuthorizerContext | null | undefined;
  if (mode !== "local" && authorizer?.client !== undefined && authorizer.trusted === "true")
    return `${API_KEY_USER_PREFIX}${authorizer.client}`;
  return callerId(event, mode);
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
