import * as z from "../zod";

/**
 * S3 event notifications as they arrive in an SQS message body: a `Records` array, or the
 * `s3:TestEvent` S3 sends when notifications are first configured. eventVersion is not
 * pinned: S3 has shipped 2.1, 2.2 and 2.3.
 */
const S3Record = z.object({
  eventVersion: z.string(),
  eventSource: z.literal("aws:s3"),
  eventName: z.string().check(z.minLength(1)),
  s3: z.object({
    bucket: z.object({ name: z.string().check(z.minLength(1)) }),
    object: z.object({
      key: z.string().check(z.minLength(1)),
      size: z.optional(z.number().check(z.int(), z.nonnegative())),
      eTag: z.optional(z.string()),
      versionId: z.optional(z.string()),
      sequencer: z.string().check(z.regex(/^[0-9A-Fa-f]+$/, "must be hexadecimal")),
    }),
  }),
});

const TestEvent = z.object({ Event: z.literal("s3:TestEvent") });
const Notification = z.object({ Records: z.array(S3Record).check(z.minLength(1)) });

export interface S3ObjectEvent {
  kind: "created" | "removed";
  bucket: string;
  /** decoded: "red flower.md", not "red+flower.md" */
  key: string;
  size?: number;
  etag?: string;
  sequencer: string;
}

/** S3 URL-encodes keys in notifications, with "+" for spaces. */
export const decodeS3Key = (key: string) => decodeURIComponent(key.replace(/\+/g, "%20"));

/**
 * The object events in one SQS message body. A test event gives none; event types other
 * than created/removed (restore, replication…) and folder markers are ignored. Anything malformed throws, so
 * the message is retried and then dead-lettered rather than silently dropped.
 */
export function parseS3Notification(body: string): S3ObjectEvent[] {
  const json: unknown = JSON.parse(body);
  if (TestEvent.safeParse(json).success) return [];
  const { Records } = Notification.parse(json);
  return Records.flatMap((r): S3ObjectEvent[] => {
    const kind = r.eventName.startsWith("ObjectCreated:")
      ? "created"
      : r.eventName.startsWith("ObjectRemoved:")
        ? "removed"
        : undefined;
    // A key ending in / is a folder's marker (the console's "Create folder"), not a document.
    const o = r.s3.object;
    const key = decodeS3Key(o.key);
    if (!kind || key.endsWith("/")) return [];
    return [{ kind, bucket: r.s3.bucket.name, key, size: o.size, etag: o.eTag, sequencer: o.sequencer }];
  });
}
