/**
 * Lambda's asynchronous invocation (how S3 notifications invoke a function), for the local stack:
 * a failed invocation is retried twice, then the event is dropped (the stack sets no failure
 * destination) and reported here. Lambda waits about a minute, then two, between attempts; the
 * local stack waits seconds so that a retry shows up while someone is looking.
 */
export async function invokeAsync(
  invoke: () => Promise<unknown>,
  { delaysMs = [1_000, 2_000], onFailure }: { delaysMs?: number[]; onFailure: (err: unknown) => void },
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await invoke();
      return;
    } catch (err) {
      if (attempt >= delaysMs.length) return onFailure(err);
      // Unref'd: a retry waiting must not keep a closing stack's process alive.
      await new Promise((r) => setTimeout(r, delaysMs[attempt]).unref());
    }
  }
}
