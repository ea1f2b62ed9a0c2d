import type { SerializerProtocol } from "@langchain/langgraph-checkpoint";

/**
 * A serialized value embedded in a JSON document: JSON output is kept as parsed JSON
 * (so it is not escaped a second time), anything else as base64.
 */
export type Inline = { t: string; j: unknown } | { t: string; s: string };

export function inlineBytes(type: string, bytes: Uint8Array): Inline {
  return type === "json"
    ? { t: type, j: JSON.parse(Buffer.from(bytes).toString("utf8")) }
    : { t: type, s: Buffer.from(bytes).toString("base64") };
}

export async function toInline(serde: SerializerProtocol, value: unknown): Promise<Inline> {
  const [type, bytes] = await serde.dumpsTyped(value);
  return inlineBytes(type, bytes);
}

export function fromInline(serde: SerializerProtocol, inline: Inline): Promise<unknown> {
  return "j" in inline
    ? serde.loadsTyped(inline.t, JSON.stringify(inline.j))
    : serde.loadsTyped(inline.t, Buffer.from(inline.s, "base64"));
}
