import type { Backends } from "./backends";
import { loadConfig, type Config } from "./config";
import { deferredRuntime } from "./deferred";

/**
 * What every handler is built from, in Lambda and on the local stack alike: the settings, known
 * at init, and the backends, asked for on first use. Each function module exports
 * `createHandler(wiring)`; its Lambda `handler` is `createHandler(awsWiring())`, and the local stack
 * calls the same factory with its stand-ins, so both run one piece of wiring.
 */
export interface Wiring {
  /** read once; handlers that parse requests before loading anything read it at init */
  config: () => Config;
  backends: () => Promise<Backends>;
}

/**
 * Lambda's wiring: settings validated at init (a bad one fails the cold start by name), the SDK
 * clients and Supabase loaded by the first request that needs them (shared/deferred.ts).
 */
export function awsWiring(): Wiring {
  let config: Config | undefined;
  return {
    config: () => (config ??= loadConfig()),
    backends: deferredRuntime(
      () => import("./backends"),
      ({ awsBackends }) => awsBackends(),
    ),
  };
}
