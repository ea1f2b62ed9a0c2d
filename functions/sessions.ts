import * as z from "../shared/zod";
import { apiHandler } from "../shared/api-handler";
import type { Backends } from "../shared/backends";
import { awsWiring, type Wiring } from "../shared/wiring";
import { AppError, badRequest, sessionNotFound, storeUnavailable } from "../shared/errors";
import { json, parseJsonBody, parseQuery } from "../shared/http";
import { ApproveTools, type SessionSettings, SettingsPatch, storedSettings } from "../shared/session-settings";
import { callerId } from "../shared/identity";
import { createLogger } from "../shared/logger";
import type { RouteSchemas } from "../shared/request-schemas";
import { storableText } from "../shared/text";
import { decodeCursor } from "../shared/stores/conversations";
import { SessionOwners } from "../shared/stores/session-owners";
import { ownedSession } from "../shared/ownership";
import { newestWithin } from "../shared/response-bytes";

const logger = createLogger("sessions");

const SessionId = z.uuid();
const ListQuery = z.object({
  limit: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(100)), 20),
  cursor: z.optional(
    storableText({ min: 1, max: 512 }).check(
      z.refine((c) => decodeCursor(c) !== undefined, "is not a cursor this API returned (use next_cursor as given)"),
    ),
  ),
});

/**
 * PATCH /api/sessions/{id}: some settings, and which tools' calls wait for approval (names, "*", or
 * [] for none); the next turn runs with them.
 */
const SessionPatch = z
  .strictObject({ settings: z.optional(SettingsPatch), approve_tools: z.optional(ApproveTools) })
  .check(
    z.refine((p) => p.settings !== undefined || p.approve_tools !== undefined, {
      message: "send settings, approve_tools or both",
    }),
  );

const historyUnavailable = () =>
  new AppError(503, "history_unavailable", "conversation history needs Supabase, which is not configured");

/**
 * GET    /api/sessions                  the caller's sessions, most recently active first, paginated
 * GET    /api/sessions/{id}             a session's settings and the tools that wait for approval
 * GET    /api/sessions/{id}/messages    a session's answers-only history (?trace=1 adds each reply's trace)
 * PATCH  /api/sessions/{id}             {"settings": {...}, "approve_tools": [...]}: tool groups, private and
 *                                       the tools that wait for approval, from the next turn on
 * DELETE /api/sessions/{id}             everything the session left (graph/chat/session-deletion.ts)
 * Another user's session is 404 on every route, like one that does not exist.
 */
export function createSessionsHandler(
  backends: () => Promise<Backends> | Backends,
  corsOrigins?: () => string | undefined,
) {
  return apiHandler(
    logger,
    async (event) => {
      const { config, dynamo, conversations } = await backends();
      const userId = callerId(event, config.AUTH_MODE);

      const owners = new SessionOwners(dynamo, config.CHECKPOINT_TABLE, config.CHECKPOINT_TTL_DAYS);
      if (event.resource === "/api/sessions") {
        const query = parseQuery(event, ListQuery);
        if (!conversations) throw historyUnavailable();
        const page = await conversations.listSessions(userId, query).catch((err) => {
          throw storeUnavailable(err);
        });
        // Settings live on the sessions' owner records (read by every turn): one BatchGetItem per page.
        const records = await owners.sessions(page.sessions.map((s) => s.session_id));
        const sessions = page.sessions.map((s) => {
          // A record of someone else's (the caller's expired, and another made a thread under the
          // id since) says nothing about the caller's session.
          const found = records.get(s.session_id);
          const record = found?.userId === userId ? found : undefined;
          const settings = record?.settings ?? storedSettings(undefined);
          return { ...s, private: settings.private, settings, approve_tools: record?.approveTools ?? [] };
        });
        return json(200, { sessions, ...(page.nextCursor ? { next_cursor: page.nextCursor } : {}) });
      }

      const id = SessionId.safeParse(event.pathParameters?.id);
      if (!id.success) throw badRequest("invalid_session_id", "session id must be a UUID");
      const sessionId = id.data;
      // Ownership before effect: every route naming a session, before it reads or writes anything of it.
      const session = await ownedSession(owners, userId, sessionId, sessionNotFound, {
        toDelete: event.httpMethod === "DELETE",
      });

      // What the owner record says (the same read as the ownership check): a client showing one
      // session's settings, such as the playground's thread list, needs no page of the session list.
      if (event.resource === "/api/sessions/{id}" && event.httpMethod === "GET")
        return json(200, sessionSettingsJson(sessionId, session.settings, session.approveTools ?? []));

      if (event.httpMethod === "PATCH") {
        const { settings: patch, approve_tools: approval } = parseJsonBody(event, SessionPatch, { maxBytes: 4096 });
        if (approval !== undefined && !(await owners.updateApproval(sessionId, userId, approval)))
          throw sessionNotFound();
        const settings = await owners.updateSettings(sessionId, userId, patch ?? {});
        if (!settings) throw sessionNotFound();
        logger.info("session settings changed", { sessionId, settings, approval });
        return json(200, sessionSettingsJson(sessionId, settings, approval ?? session.approveTools ?? []));
      }

      if (event.httpMethod === "DELETE") {
        // Loaded here: only a delete needs the saver, and it brings LangGraph's checkpoint package.
        const { deleteSession } = await import("../graph/chat/session-deletion");
        await deleteSession(await backends(), userId, sessionId, {
          notFound: sessionNotFound,
          busy: () => new AppError(409, "session_busy", "a message in this session is still being answered; retry"),
        });
        logger.info("session deleted", { sessionId });
        return { statusCode: 204, body: "" };
      }

      if (!conversations) throw historyUnavailable();
      const { before } = parseQuery(event, HistoryQuery);
      const withTrace = event.queryStringParameters?.trace === "1";
      const conversation = await conversations.get(sessionId).catch((err) => {
        throw storeUnavailable(err);
      });
      // The transcript is read by session id: it must be the caller's too. An owner record the
      // caller holds can be one made under the id after the transcript's owner's expired (TTL).
      if (conversation === undefined || conversation.userId !== userId) throw sessionNotFound();
      const traces = withTrace
        ? await conversations.traces(sessionId).catch((err) => {
            throw storeUnavailable(err);
          })
        : undefined;
      const messages = conversation.messages
        .slice(0, before === undefined ? undefined : Number(before))
        .map(({ role, content, created_at, message_id, attachments }) => ({
          role,
          content,
          created_at,
          ...(attachments?.length ? { attachments } : {}),
          ...(traces && role === "assistant" ? { trace: traces[message_id] ?? [] } : {}),
        }));
      // Newest first in pages a response can hold: the next (older) page is before this one's first.
      const { start, page } = newestWithin(messages, config.HISTORY_PAGE_MAX_BYTES);
      return json(200, page, start > 0 ? { "x-pagination-next": String(start) } : {});
    },
    { corsOrigins },
  );
}

const SessionPath = z.object({ id: SessionId });

/** A page of the history: the messages before a position (the x-pagination-next of the page after it). */
const HistoryQuery = z.looseObject({
  before: z.optional(
    storableText({ min: 1, max: 9 }).check(z.regex(/^\d+$/, { error: "a position, as x-pagination-next gave it" })),
  ),
});

/** One session's settings, as GET and PATCH /api/sessions/{id} answer them. */
const sessionSettingsJson = (sessionId: string, settings: SessionSettings, approveTools: string[] | "*") => ({
  session_id: sessionId,
  private: settings.private,
  settings,
  approve_tools: approveTools,
});

/** The routes' request schemas, for the storable-text walk (shared/request-schemas.ts). */
export const requestSchemas: RouteSchemas = {
  "GET /api/sessions": { query: ListQuery },
  "GET /api/sessions/{id}": { path: SessionPath },
  "GET /api/sessions/{id}/messages": { path: SessionPath, query: HistoryQuery },
  "PATCH /api/sessions/{id}": { path: SessionPath, body: SessionPatch },
  "DELETE /api/sessions/{id}": { path: SessionPath },
};

/** The handler on any wiring: Lambda's below, or the local stack's. */
export const createHandler = ({ config, backends }: Wiring) =>
  createSessionsHandler(backends, () => config().CORS_ORIGINS);

// The backends (DynamoDB, Supabase and their clients) load with the first request (shared/deferred.ts).
export const handler = createHandler(awsWiring());
export { loadDeferred } from "../shared/deferred";
