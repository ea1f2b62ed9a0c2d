import { once } from "./once";

const loads: Array<() => Promise<unknown>> = [];

/**
 * A handler's heavy modules (the agent graph, LangChain, the AWS SDK clients), imported by the
 * first request that gets past the handler's own checks instead of at init. Init then stays
 * small (what Lambda bills and times out separately), an invalid or unauthorised request is
 * answered without loading the agent, and the first real request pays the load once.
 */
export function deferredRuntime<M, R>(load: () => Promise<M>, build: (modules: M) => Promise<R>): () => Promise<R> {
  const modules = once(load);
  loads.push(modules);
  return once(async () => build(await modules()));
}

/**
 * Imports every deferred module of this bundle now. Each function exports it so the cold-start
 * bench can time what a first request pays on top of init.
 */
export function loadDeferred(): Promise<unknown[]> {
  return Promise.all(loads.map((load) => load()));
}
