import type { RunRecord } from "./agent-runs";
import type { ThreadRecord } from "./agent-threads";

// The Agent Server API's shapes of the stored threads and runs: what its routes answer and what a
// user's export holds, one mapping for both.

/** A thread as the API shows it (`Thread` in the SDK's types). */
export function threadJson(record: ThreadRecord, values: unknown = record.values ?? null) {
  return {
    thread_id: record.threadId,
    created_at: record.createdAt,
    updated_at: record.updatedAt,
    metadata: record.metadata,
    status: record.status,
    values,
    interrupts: record.interrupts ?? {},
  };
}

/** A run record as the API shows it (`Run` in the SDK's types). */
export function runJson(run: RunRecord) {
  return {
    run_id: run.runId,
    thread_id: run.threadId,
    assistant_id: run.assistantId,
    status: run.status,
    metadata: run.metadata,
    multitask_strategy: run.multitaskStrategy,
    created_at: run.createdAt,
    updated_at: run.updatedAt,
    ...(run.error ? { error: run.error } : {}),
  };
}
