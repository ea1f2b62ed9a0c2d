import type { IncomingMessage, ServerResponse } from "node:http";
import type { SupportGraph } from "../../graph/support/graph";
import { latestSupportRun } from "../../graph/support/run";
import { errorBody } from "../../shared/http";
import type { IntercomStandIn } from "./intercom";
import { sendJson } from "./send-json";

const PATH = /^\/_local\/intercom\/conversations\/([^/]*)\/run$/;
/** Intercom numbers its conversations, and so does the stand-in: anything else names none. */
const CONVERSATION_ID = /^\d{1,32}$/;

/**
 * A local-only route the playground polls beside the stand-in's actions: what the support agent
 * did on a conversation, hop by hop, read from the checkpoint the worker saved.
 *   GET /_local/intercom/conversations/{id}/run -> 200 SupportRun (graph/support/run-types.ts)
 * A conversation the stand-in does not hold is a 404; one it holds that no worker has started on
 * yet is a 200 "waiting", so a page polling it right after writing in sees no error.
 */
export class SupportRuns {
  constructor(
    private readonly intercom: IntercomStandIn,
    private readonly graph: SupportGraph,
  ) {}

  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
    const match = PATH.exec(url.pathname);
    if (!match) return false;
    const id = decoded(match[1]!);
    if (req.method !== "GET") sendJson(res, 405, errorBody("method_not_allowed", "GET only"));
    else if (id === undefined || !CONVERSATION_ID.test(id))
      sendJson(res, 400, errorBody("invalid_conversation_id", "a conversation id is Intercom's: digits only"));
    else if (!this.intercom.has(id))
      sendJson(res, 404, errorBody("conversation_not_found", `the Intercom stand-in has no conversation ${id}`));
    else {
      try {
        sendJson(res, 200, await latestSupportRun(this.graph, id));
      } catch (err) {
        // The stack keeps serving: a failed read is this request's 500, never an unhandled rejection.
        sendJson(res, 500, errorBody("internal_error", (err as Error).message));
      }
    }
    return true;
  }
}

const decoded = (raw: string): string | undefined => {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
};
