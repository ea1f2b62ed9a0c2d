import * as z from "./zod";

/**
 * Text that may reach storage: well-formed Unicode (no lone surrogate) and no NUL.
 *
 * A lone surrogate cannot be encoded as UTF-8: the drivers replace it with U+FFFD on the way to
 * Postgres, so "x\ud800", "x\ud801" and "x\ufffd" would become the same id (and Postgres's jsonb
 * refuses both "\ud800" and "\u0000" escapes outright). NUL is refused by Postgres text. So both are
 * refused at the boundary, before anything is written. (String.prototype.isWellFormed exists from
 * Node 20, but TypeScript's ES2023 lib does not declare it; the regex says the same thing.)
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a text cannot be stored, or undefined when it can. */
export function storableTextProblem(text: string): string | undefined {
  if (text.includes("\u0000")) return "must not contain NUL characters";
  if (LONE_SURROGATE.test(text)) return "must be well-formed Unicode (it holds a lone surrogate)";
  return undefined;
}

export const isStorableText = (text: string) => storableTextProblem(text) === undefined;

/**
 * The storable-text check, one instance for every schema: a schema carries it (through `.optional()`,
 * `.max()`, `.refine()` and the like, which keep their checks) or it does not, which is how
 * test/integrity/storable-schemas.unit.test.ts finds a request field that skips it.
 */
const STORABLE_TEXT = z.superRefine<string>((value, ctx) => {
  const problem = storableTextProblem(value);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

/** A zod string refined to storable text. */
export function storable<S extends z.ZodMiniType<string>>(schema: S): S {
  return schema.check(STORABLE_TEXT as never) as S;
}

/**
 * The one type of every client string that reaches storage: storable text, bounded. `trim` trims
 * before the bounds are checked. Request schemas use it (or `identifier()`, or a UUID or enum).
 */
export function storableText({ min = 0, max, trim = false }: { min?: number; max: number; trim?: boolean }) {
  const key = `${min}:${max}:${trim}`;
  let schema = storableTexts.get(key);
  if (!schema) {
    // All checks in one call: each `.check()` of zod/mini builds a new schema, and a cold start
    // builds every request schema of its function.
    const checks = [...(trim ? [z.trim()] : []), ...(min > 0 ? [z.minLength(min)] : []), z.maxLength(max)];
    schema = z.string().check(...checks, STORABLE_TEXT as never);
    storableTexts.set(key, schema);
  }
  return schema;
}

/** One schema per bounds, shared: a schema is immutable (a check or description makes a new one). */
const storableTexts = new Map<string, z.ZodMiniString>();

/** Whether a schema's values pass the storable-text check (see STORABLE_TEXT). */
export function checksStorableText(schema: z.ZodMiniType): boolean {
  const checks = (schema as { _zod: { def: { checks?: unknown[] } } })._zod.def.checks ?? [];
  return checks.includes(STORABLE_TEXT);
}

/**
 * Makes a text storable: lone surrogates become U+FFFD, NUL is dropped. For text this system did
 * not take from a client (a model's reply), where refusing would lose a turn that already ran.
 */
export function toStorableText(text: string): string {
  if (isStorableText(text)) return text;
  return text
    .replaceAll("\u0000", "")
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");
}

/** The first `max` code points of a text, with "…" when it was cut: never half a surrogate pair. */
export function truncateCodePoints(text: string, max: number): string {
  if (text.length <= max) return text;
  const points = Array.from(text);
  return points.length <= max ? text : `${points.slice(0, max).join("")}…`;
}

/** The longest start of a text that is at most `maxBytes` in UTF-8, never half a character. */
export function truncateUtf8(text: string, maxBytes: number): string {
  const bytes = new TextEncoder().encode(text); // also in the browser (the playground shares this file)
  if (bytes.length <= maxBytes) return text;
  let end = Math.max(0, maxBytes);
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--; // back to the first byte of a character
  return new TextDecoder().decode(bytes.subarray(0, end));
}

/** The longest user, project or other client-named id. */
export const MAX_ID_LENGTH = 128;

/** A client-named id (user, project): 1–128 characters of storable text, trimmed. */
export const identifier = () => storableText({ min: 1, max: MAX_ID_LENGTH, trim: true });

/** toStorableText over every string (and key) of a JSON value, for jsonb columns. */
export function toStorableDeep<T>(value: T): T {
  if (typeof value === "string") return toStorableText(value) as T;
  if (Array.isArray(value)) return value.map(toStorableDeep) as T;
  if (value && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [toStorableText(k), toStorableDeep(v)])) as T;
  return value;
}
