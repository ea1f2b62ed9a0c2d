import type { BaseCheckpointSaver, CheckpointTuple, PendingWrite } from "@langchain/langgraph-checkpoint";

/**
 * Copies a thread's whole history (every checkpoint, with its id, parent, metadata and pending
 * writes) into another thread, as LangGraph's server copies a thread: the copy's history is the
 * original's, its checkpoints' metadata naming the copy. Through the saver's own API, oldest
 * first, so each checkpoint's parent is in place before it.
 */
export async function copyThreadHistory(saver: BaseCheckpointSaver, from: string, to: string): Promise<number> {
  const tuples: CheckpointTuple[] = [];
  for await (const tuple of saver.list({ configurable: { thread_id: from, checkpoint_ns: "" } })) tuples.push(tuple);
  tuples.reverse();
  for (const tuple of tuples) {
    const parentId = tuple.parentConfig?.configurable?.checkpoint_id as string | undefined;
    const metadata = {
      ...tuple.metadata,
      ...(tuple.metadata && "thread_id" in tuple.metadata ? { thread_id: to } : {}),
    };
    const saved = await saver.put(
      { configurable: { thread_id: to, checkpoint_ns: "", ...(parentId ? { checkpoint_id: parentId } : {}) } },
      tuple.checkpoint,
      metadata as NonNullable<CheckpointTuple["metadata"]>,
      tuple.checkpoint.channel_versions,
    );
    const byTask = new Map<string, PendingWrite[]>();
    for (const [taskId, channel, value] of tuple.pendingWrites ?? [])
      byTask.set(taskId, [...(byTask.get(taskId) ?? []), [channel, value]]);
    for (const [taskId, writes] of byTask) await saver.putWrites(saved, writes, taskId);
  }
  return tuples.length;
}
