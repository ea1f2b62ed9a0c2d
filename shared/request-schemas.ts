import type * as z from "./zod";

/** What a route takes from its request, as the zod schemas its handler parses it with. */
export interface RequestSchemas {
  body?: z.ZodMiniType;
  query?: z.ZodMiniType;
  path?: z.ZodMiniType;
}

/**
 * A function's routes (`"<METHOD> <resource>"`, as infra/manifest.ts declares them) and their
 * schemas. Every API function exports one as `requestSchemas`, so test/integrity/storable-schemas
 * can walk every route's request and find a string that would reach storage unchecked.
 */
export type RouteSchemas = Record<string, RequestSchemas>;
