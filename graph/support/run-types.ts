// What the local stack's GET /_local/intercom/conversations/{id}/run answers, as types only: the
// playground's page imports them, so nothing here may need Node.
import type { SupportStateType } from "./state";

/**
 * A conversation's support run as its thread's latest checkpoint holds it: every hop taken on the
 * conversation (each names the customer part it worked on), and how the latest part's run went.
 */
export interface SupportRun extends Pick<
  SupportStateType,
  "hops" | "draft" | "validate" | "escalate" | "response_delivery" | "ignored_reason" | "finalize" | "error"
> {
  conversation_id: string;
  /** waiting: no checkpoint yet (the worker has not started); running: `next` still has nodes to run */
  status: "waiting" | "running" | "ended";
  /** the nodes the run goes to next */
  next: string[];
  /** the customer part the latest run answers; null while waiting */
  part_id: string | null;
  /** when the latest checkpoint was written; null while waiting */
  updated_at: string | null;
}
