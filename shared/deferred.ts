import { once } from "./once";

/**
 * Where a bundle's deferred loads are registered: one per process (the functions below), and one
 * of its own for a test, which would otherwise load what every earlier file in its worker registered.
 */
export function deferredRegistry() {
  const loads: Array<() => Promise<unknown>> = [];
  return {
    /**
     * A handler's heavy modules (the agent graph, LangChain, the AWS SDK clients), imported by the
     * first request that gets past the handler's own checks instead of at init. Init then stays
     * small (what Lambda bills and times out separately), an invalid or unauthorised request is
     * answered without loading the agent, and the first real request pays the load once.
     */
    deferredRuntime<M, R>(load: () => Promise<M>, build: (modules: M) => Promise<R>): () => Promise<R> {
      const modules = once(load);
      loads.push(modules);
      return once(async () => build(await modules()));
    },

    /**
     * A module imported on first use by code that is itself deferred: the Bedrock model classes,
     * which a deployment with a Bedrock model loads on its first turn (the offline stand-ins never
     * do). Registered so that loadDeferred, and so the cold-start bench, counts it as part of that
     * first request. Call it at a module's top level, once per module: each call registers a load
     * that loadDeferred imports.
     */
    deferredModule<M>(load: () => Promise<M>): () => Promise<M> {
      const module = once(load);
      loads.push(module);
      return module;
    },

    /**
     * Imports every deferred module of this bundle now, and those the loaded ones register in turn.
     * Each function exports it so the cold-start bench can time what a first request pays on top
     * of init.
     */
    async loadDeferred(): Promise<void> {
      for (let loaded = 0; loaded < loads.length;) {
        const next = loads.slice(loaded);
        loaded = loads.length;
        await Promise.all(next.map((load) => load()));
      }
    },
  };
}

export const { deferredRuntime, deferredModule, loadDeferred } = deferredRegistry();

/** An interface of asynchronous methods only, required ones: what loadedOnFirstCall can stand in for. */
type AsyncMethods<T> = { [K in keyof T]-?: (...args: never[]) => Promise<unknown> };

/**
 * An object whose implementation, and the module it comes from, is loaded with the first call of
 * any of its methods (each returns a promise). A backend a request may never use (the S3 bucket,
 * the data function's client, EventBridge Scheduler) then costs a function's first request
 * nothing unless that request uses it. `methods` names every method, so the compiler stops a
 * method added to the interface but not forwarded here.
 */
export function loadedOnFirstCall<T extends AsyncMethods<T>>(
  load: () => Promise<T>,
  methods: { readonly [K in keyof T]-?: true },
): T {
  const loaded = once(load);
  return Object.fromEntries(
    Object.keys(methods).map((name) => [
      name,
      async (...args: unknown[]) => {
        const target = await loaded();
        const method: (...a: never[]) => Promise<unknown> = target[name as keyof T];
        return method.apply(target, args as never[]);
      },
    ]),
  ) as unknown as T;
}
