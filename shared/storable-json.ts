import * as z from "./zod";
import { storableTextProblem } from "./text";

/**
 * DynamoDB nests maps and lists at most 32 levels deep. Its own number range (1e-130 to 1e126) is
 * wider than what the document client writes: it refuses any number past Number.MAX_SAFE_INTEGER
 * rather than lose digits, and DynamoDB refuses a magnitude under 1e-130.
 */
const MAX_DEPTH = 32;
const MIN_MAGNITUDE = 1e-130;

/** Why a JSON value cannot be stored as it is (in DynamoDB or Postgres jsonb), with where; undefined when it can. */
export function storableJsonProblem(value: unknown): string | undefined {
  const walk = (v: unknown, path: string, depth: number): string | undefined => {
    if (depth > MAX_DEPTH) return `${path || "value"}: nests deeper than ${MAX_DEPTH} levels`;
    if (typeof v === "string") {
      const problem = storableTextProblem(v);
      return problem && `${path || "value"}: ${problem}`;
    }
    if (typeof v === "number") {
      const size = Math.abs(v);
      if (!Number.isFinite(v) || size > Number.MAX_SAFE_INTEGER || (size !== 0 && size < MIN_MAGNITUDE))
        return `${path || "value"}: numbers must be 0 or between ${MIN_MAGNITUDE} and ${Number.MAX_SAFE_INTEGER} in magnitude`;
      return undefined;
    }
    if (Array.isArray(v)) {
      for (const [i, item] of v.entries()) {
        const problem = walk(item, `${path}[${i}]`, depth + 1);
        if (problem) return problem;
      }
      return undefined;
    }
    if (v !== null && typeof v === "object") {
      for (const [key, item] of Object.entries(v)) {
        const keyProblem = storableTextProblem(key);
        if (keyProblem) return `${path || "value"}: a key ${keyProblem}`;
        const problem = walk(item, path ? `${path}.${key}` : key, depth + 1);
        if (problem) return problem;
      }
      return undefined;
    }
    if (v === null || typeof v === "boolean") return undefined;
    return `${path || "value"}: is not JSON`;
  };
  return walk(value, "", 0);
}

/**
 * The storable-JSON check, one instance for every schema (as shared/text.ts's storable-text check),
 * so the request-schema walk can tell a field that has it.
 */
const STORABLE_JSON = z.superRefine<unknown>((value, ctx) => {
  const problem = storableJsonProblem(value);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

/**
 * Whether a JSON value holds `key` as a key, at any depth. The AWS SDK's DynamoDB document client
 * tells a map from a class instance by its `constructor`: an object with a key of that name is
 * refused, or read as a Set, Map or Number when that key's value has a matching `name`. JSON it
 * keeps as a map must hold no such key (dynamoMapJson); JSON kept elsewhere may.
 */
export function holdsKey(value: unknown, key: string): boolean {
  if (Array.isArray(value)) return value.some((v) => holdsKey(v, key));
  if (value === null || typeof value !== "object") return false;
  return Object.entries(value).some(([k, v]) => k === key || holdsKey(v, key));
}

const DYNAMO_MAP = z.superRefine<unknown>((value, ctx) => {
  if (holdsKey(value, "constructor"))
    ctx.addIssue({
      code: "custom",
      message: 'a key may not be "constructor" here (it is stored as a DynamoDB map, which cannot hold one)',
    });
});

export const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? "");

/**
 * A JSON value a client sends for storage (metadata, a filter), bounded by construction: every
 * string and key storable text, every number one DynamoDB takes as it is, at most 32 levels deep
 * and `maxBytes` of JSON. Over the size it is a `too_big` issue, so parseJsonBody answers
 * `<field>_too_large`.
 */
export function storableJson<S extends z.ZodMiniType>(schema: S, { maxBytes }: { maxBytes: number }): S {
  return schema.check(
    STORABLE_JSON as never,
    z.superRefine((value, ctx) => {
      const bytes = jsonBytes(value);
      if (bytes > maxBytes)
        ctx.addIssue({
          code: "too_big",
          origin: "object",
          maximum: maxBytes,
          message: `must be at most ${maxBytes} bytes of JSON (it is ${bytes})`,
        });
    }) as never,
  ) as S;
}

/** storableJson for JSON stored as a DynamoDB map (metadata, an assistant's config): no `constructor` key. */
export function dynamoMapJson<S extends z.ZodMiniType>(schema: S, options: { maxBytes: number }): S {
  return storableJson(schema, options).check(DYNAMO_MAP as never) as S;
}

/** Whether a schema's values pass the storable-JSON check. */
export function checksStorableJson(schema: z.ZodMiniType): boolean {
  const checks = (schema as { _zod: { def: { checks?: unknown[] } } })._zod.def.checks ?? [];
  return checks.includes(STORABLE_JSON);
}

/** How much metadata a thread or run keeps: well inside DynamoDB's 400 KB item, with room for the rest. */
export const MAX_METADATA_BYTES = 64 * 1024;

/** Metadata as the Agent Server API takes it for threads and runs: a storable JSON object. */
export const Metadata = dynamoMapJson(z.record(z.string(), z.unknown()), { maxBytes: MAX_METADATA_BYTES });
