/**
 * A deep copy that keeps each object's prototype, so a copied LangChain message is still an
 * AIMessage with its methods.
 *
 * Hand-written because the libraries that keep prototypes (klona/full, lodash's cloneDeep) pick
 * their strategy from `Object.prototype.toString`, and LangChain's messages define
 * `Symbol.toStringTag` ("[object AIMessage]"): both then return the message itself, uncopied.
 * Values here come from JSON revival or from graph state, so the cases below are the ones
 * that occur; anything exotic (a function, a class with private fields) is shared, not copied.
 */
export function deepCopy<T>(value: T): T {
  return copy(value, new Map()) as T;
}

function copy(value: unknown, seen: Map<object, unknown>): unknown {
  if (typeof value !== "object" || value === null) return value;
  const done = seen.get(value);
  if (done !== undefined) return done;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    seen.set(value, out);
    for (let i = 0; i < value.length; i++) out[i] = copy(value[i], seen);
    return out;
  }
  if (ArrayBuffer.isView(value)) return (value as unknown as Uint8Array).slice();
  if (value instanceof Date) return new Date(value.getTime());
  if (value instanceof Map) {
    const out = new Map();
    seen.set(value, out);
    for (const [k, v] of value) out.set(k, copy(v, seen));
    return out;
  }
  if (value instanceof Set) {
    const out = new Set();
    seen.set(value, out);
    for (const v of value) out.add(copy(v, seen));
    return out;
  }
  const out = Object.create(Object.getPrototypeOf(value)) as Record<PropertyKey, unknown>;
  seen.set(value, out);
  for (const key of Reflect.ownKeys(value)) {
    const d = Object.getOwnPropertyDescriptor(value, key)!;
    if ("value" in d) d.value = copy(d.value, seen);
    Object.defineProperty(out, key, d);
  }
  return out;
}
