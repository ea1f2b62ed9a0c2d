import { useCallback, useEffect, useRef, useState } from "react";
import { describeError } from "./api";

export interface Polled<T> {
  data: T | undefined;
  error: { code: string; message: string } | undefined;
  /** loads now, outside the interval (after a change this page made) */
  refresh: () => Promise<void>;
}

/**
 * Loads at once and then every `intervalMs` while the page is visible: how a memory extracted in
 * the background, or a document the ingest queue finished, shows up without a reload. A change of
 * `key` (another user, another filter) drops what was loaded and starts again.
 */
export function usePolling<T>(load: () => Promise<T>, intervalMs: number, key: string): Polled<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<Polled<T>["error"]>();
  const loadRef = useRef(load);
  loadRef.current = load;
  // Answers to an earlier key that arrive late are dropped: only the newest key's loads count.
  const generation = useRef(0);

  const refresh = useCallback(async () => {
    const mine = generation.current;
    try {
      const value = await loadRef.current();
      if (mine !== generation.current) return;
      setData(value);
      setError(undefined);
    } catch (err) {
      if (mine === generation.current) setError(describeError(err));
    }
  }, []);

  useEffect(() => {
    generation.current += 1;
    setData(undefined);
    void refresh();
    const timer = setInterval(() => {
      if (!document.hidden) void refresh();
    }, intervalMs);
    return () => clearInterval(timer);
  }, [key, intervalMs, refresh]);

  return { data, error, refresh };
}
