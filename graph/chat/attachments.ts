import { badRequest } from "../../shared/errors";
import { claimedKind, inspectImage } from "../../shared/files/inspect";
import type { FileRecord } from "../../shared/files/records";
import { IMAGE_LIMITS, type ImageRef } from "./images";

/**
 * The images a turn's `attachments` name, checked before the turn runs: each must be a ready
 * image file of this session, and together within Bedrock's limits. Anything else is a 400 that
 * names the problem; nothing of the turn has been written yet.
 */
export async function attachedImages(
  files: { get(sessionId: string, fileId: string): Promise<FileRecord | undefined> } | undefined,
  sessionId: string | undefined,
  userId: string,
  fileIds: string[] | undefined,
): Promise<ImageRef[]> {
  if (!fileIds || fileIds.length === 0) return [];
  if (!files) throw badRequest("attachments_unavailable", "this deployment has no attachments bucket");
  if (!sessionId)
    throw badRequest("invalid_attachment", "attachments name files of an existing session: upload them to it first");
  const ids = [...new Set(fileIds)];
  if (ids.length > IMAGE_LIMITS.perRequest)
    throw badRequest("too_many_images", `at most ${IMAGE_LIMITS.perRequest} images per message (${ids.length} given)`);
  const refs: ImageRef[] = [];
  for (const id of ids) {
    const file = await files.get(sessionId, id);
    // Another session's or user's file looks the same as none: its existence is not told.
    if (!file || file.user_id !== userId) throw badRequest("invalid_attachment", `no file ${id} in this session`);
    if (file.status !== "ready") throw badRequest("invalid_attachment", `${file.name} is ${file.status}, not ready`);
    if (file.kind !== "image") throw badRequest("invalid_attachment", `${file.name} is a data file, not an image`);
    if (file.bytes > IMAGE_LIMITS.bytes)
      throw badRequest(
        "image_too_large",
        `${file.name} is ${file.bytes} bytes; Bedrock takes at most ${IMAGE_LIMITS.bytes}`,
      );
    if ((file.width ?? 0) > IMAGE_LIMITS.pixels || (file.height ?? 0) > IMAGE_LIMITS.pixels)
      throw badRequest(
        "image_too_large",
        `${file.name} is ${file.width}x${file.height} pixels; Bedrock takes at most ${IMAGE_LIMITS.pixels} on a side`,
      );
    refs.push(imageRefOf(file));
  }
  return refs;
}

/** An image sent inline (base64 in the chat body), checked by its bytes and ready to store. */
export interface InlineImage {
  name: string;
  media_type: string;
  bytes: Uint8Array;
  width: number;
  height: number;
}

/**
 * Inline images checked before the turn runs, as uploads are: by their magic bytes (the claimed
 * type is not trusted) and against Bedrock's limits, counting the attached files too.
 */
export async function checkInlineImages(
  images: { media_type: string; bytes: Uint8Array }[] | undefined,
  attached: number,
): Promise<InlineImage[]> {
  if (!images || images.length === 0) return [];
  if (images.length + attached > IMAGE_LIMITS.perRequest)
    throw badRequest(
      "too_many_images",
      `at most ${IMAGE_LIMITS.perRequest} images per message (${images.length + attached} given)`,
    );
  const checked: InlineImage[] = [];
  for (const [i, image] of images.entries()) {
    const name = `image-${i + 1}.${image.media_type.replace("image/", "").replace("jpeg", "jpg")}`;
    const found =
      claimedKind(image.media_type) === "image"
        ? await inspectImage(image.bytes)
        : { ok: false as const, reason: `unsupported media type ${image.media_type}` };
    if (!found.ok || found.kind !== "image")
      throw badRequest("invalid_image", `images.${i}: ${found.ok ? "not an image" : found.reason}`);
    if (image.bytes.byteLength > IMAGE_LIMITS.bytes)
      throw badRequest(
        "image_too_large",
        `images.${i} is ${image.bytes.byteLength} bytes; Bedrock takes at most ${IMAGE_LIMITS.bytes}`,
      );
    if (found.width > IMAGE_LIMITS.pixels || found.height > IMAGE_LIMITS.pixels)
      throw badRequest(
        "image_too_large",
        `images.${i} is ${found.width}x${found.height} pixels; Bedrock takes at most ${IMAGE_LIMITS.pixels} on a side`,
      );
    checked.push({ name, media_type: found.media_type, bytes: image.bytes, width: found.width, height: found.height });
  }
  return checked;
}

/** The reference a stored file becomes in a message. */
export const imageRefOf = (file: FileRecord): ImageRef => ({
  type: "image_ref",
  file_id: file.file_id,
  key: file.key,
  name: file.name,
  media_type: file.media_type,
  bytes: file.bytes,
  ...(file.width ? { width: file.width, height: file.height } : {}),
});
