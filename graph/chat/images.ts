import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { MAX_IMAGE_SIDE } from "../../shared/files/image-structure";

/**
 * An image a user message names: what the checkpoint keeps instead of the bytes. The block is
 * this project's own; it never reaches a model: `withImages` turns it into a Converse image
 * block, or a text stub, before each model call.
 */
export interface ImageRef {
  type: "image_ref";
  file_id: string;
  /** the object's key in the attachments bucket */
  key: string;
  name: string;
  media_type: string;
  bytes: number;
  width?: number;
  height?: number;
}

/** Bedrock Converse's limits on images in one request (Anthropic models on Bedrock: 20, 3.75 MB, 8,000 px). */
export const IMAGE_LIMITS = { perRequest: 20, bytes: 3.75 * 1024 * 1024, pixels: MAX_IMAGE_SIDE } as const;

/** The user's text with references to images of the session, as a human message's content. */
export function humanContent(text: string, images: ImageRef[]): string | (ImageRef | { type: "text"; text: string })[] {
  return images.length === 0 ? text : [{ type: "text", text }, ...images];
}

export const isImageRef = (block: unknown): block is ImageRef =>
  typeof block === "object" && block !== null && (block as { type?: unknown }).type === "image_ref";

/** The references of a message's content. */
export const imageRefsOf = (message: BaseMessage): ImageRef[] =>
  Array.isArray(message.content) ? (message.content as unknown[]).filter(isImageRef) : [];

/**
 * The messages a model call is sent, their image references resolved: the newest
 * `IMAGE_LIMITS.perRequest` images as Converse image blocks (bytes read now, from the bucket), any
 * older one, or one that can no longer be read, as a short text stub. A long session so resends
 * its recent pictures only, and the checkpoint never holds their bytes.
 */
export async function withImages(
  messages: BaseMessage[],
  read: ((ref: ImageRef) => Promise<Uint8Array | undefined>) | undefined,
): Promise<BaseMessage[]> {
  if (!messages.some((m) => imageRefsOf(m).length > 0)) return messages;
  let budget: number = IMAGE_LIMITS.perRequest;
  const out = [...messages];
  for (let i = out.length - 1; i >= 0; i--) {
    const message = out[i]!;
    const refs = imageRefsOf(message);
    if (refs.length === 0) continue;
    const content = await Promise.all(
      (message.content as unknown[]).map(async (block) => {
        if (!isImageRef(block)) return block;
        const bytes = budget > 0 && read ? await read(block).catch(() => undefined) : undefined;
        if (bytes === undefined) return { type: "text", text: stub(block, budget > 0) };
        budget -= 1;
        return { type: "image", image: { format: block.media_type.replace("image/", ""), source: { bytes } } };
      }),
    );
    out[i] = new HumanMessage({ id: message.id, content: content as never });
  }
  return out;
}

const stub = (ref: ImageRef, readable: boolean) =>
  readable
    ? `[image ${ref.name} is no longer available]`
    : `[image ${ref.name}, ${ref.media_type}${ref.width ? `, ${ref.width}x${ref.height}` : ""}: sent earlier, not repeated]`;
