import { randomUUID } from "node:crypto";

/** S3's key encoding in notifications: URL-encoded, spaces as "+". */
export const encodeS3Key = (key: string) => encodeURIComponent(key).replace(/%20/g, "+").replace(/%2F/g, "/");

/** A sequencer S3-style: fixed-width hex that sorts with time (microseconds). */
export const sequencerAt = (epochMs: number) =>
  Math.round(epochMs * 1000)
    .toString(16)
    .toUpperCase()
    .padStart(16, "0");

/** The SQS message body S3 sends for one object event (event version 2.1 layout). */
export function s3Notification(event: {
  eventName: "ObjectCreated:Put" | "ObjectRemoved:Delete";
  bucket: string;
  key: string;
  size?: number;
  etag?: string;
  sequencer: string;
}): string {
  return JSON.stringify({
    Records: [
      {
        eventVersion: "2.1",
        eventSource: "aws:s3",
        awsRegion: "local",
        eventTime: new Date().toISOString(),
        eventName: event.eventName,
        userIdentity: { principalId: "local" },
        requestParameters: { sourceIPAddress: "127.0.0.1" },
        responseElements: { "x-amz-request-id": randomUUID(), "x-amz-id-2": randomUUID() },
        s3: {
          s3SchemaVersion: "1.0",
          configurationId: "local-drop-folder",
          bucket: { name: event.bucket, ownerIdentity: { principalId: "local" }, arn: `arn:aws:s3:::${event.bucket}` },
          object: {
            key: encodeS3Key(event.key),
            ...(event.eventName === "ObjectCreated:Put" ? { size: event.size ?? 0, eTag: event.etag ?? "" } : {}),
            sequencer: event.sequencer,
          },
        },
      },
    ],
  });
}
