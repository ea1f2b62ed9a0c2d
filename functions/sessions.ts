import { z } from "zod";
import { apiHandler } from "../shared/api-handler";
import { AppError, badRequest, sessionNotFound, storeUnavailable } from "../shared/errors";
import { callerId } from "../shared/identity";
import { json } from "../shared/http";
import { createLogger } from "../shared/logger";
import { awsBackends, type Backends } from "../shared/backends";

const logger = createLogger("sessions");
const sessionId = z.uuid();

const historyUnavailable = () =>
  new AppError(503, "history_unavailable", "conversation history needs Supabase, which is not configured");

/** GET /api/sessions/{id}/messages: a session's answers-only history, oldest first. */
export function createSessionsHandler(backends: () => Promise<Backends> | Backends) {
  return apiHandler(logger, async (event) => {
    const { config, conversations } = await backends();
    const id = sessionId.safeParse(event.pathParameters?.id);
    if (!id.success) throw badRequest("invalid_session_id", "session id must be a UUID");
    const userId = callerId(event, config.AUTH_MODE);
    if (!conversations) throw historyUnavailable();
    const conversation = await conversations.get(id.data).catch((err) => {
      throw storeUnavailable(err);
    });
    if (conversation === undefined || conversation.userId !== userId) throw sessionNotFound();
    return json(
      200,
      conversation.messages.map(({ role, content, created_at }) => ({ role, content, created_at })),
    );
  });
}

export const handler = createSessionsHandler(awsBackends);
