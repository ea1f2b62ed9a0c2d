/** Memoises an async factory: a container builds its runtime once, and retries after a failure. */
export function once<T>(factory: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= factory().catch((err) => {
      pending = undefined;
      throw err;
    });
    return pending;
  };
}
