/**
 * A request body's JSON, parsed with the two guards JSON.parse lacks, each a client's mistake to
 * be told of rather than a 500:
 * - nesting: a body nested thousands of levels deep parses, but every walk of it after (the
 *   storable-JSON check, JSON.stringify, the stores' marshalling) recurses once a level and
 *   overflows the stack. The depth is counted on the text, before parsing.
 * - a `__proto__` key: JSON.parse makes it an own key, but any copy by assignment (a schema's
 *   record, a merge) sets the prototype instead, so the value would be stored without it and
 *   answered 2xx.
 * Hand-written: JSON.parse has neither limit, and a schema sees the value only after it is built.
 */
export const MAX_JSON_DEPTH = 64;

export class JsonTextError extends Error {}

/** The depth of a JSON text's deepest array or object, strings skipped (stops counting past `limit`). */
export function jsonDepth(text: string, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c /* \ */) i++;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > deepest && (deepest = depth) > limit) return deepest;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  return deepest;
}

/** JSON.parse, refusing a text nested deeper than MAX_JSON_DEPTH or holding a `__proto__` key. */
export function parseJsonText(text: string): unknown {
  if (jsonDepth(text) > MAX_JSON_DEPTH) throw new JsonTextError(`nests deeper than ${MAX_JSON_DEPTH} levels`);
  return JSON.parse(text, (key, value) => {
    if (key === "__proto__") throw new JsonTextError('the key "__proto__" is not accepted (JavaScript reserves it)');
    return value;
  });
}
