import { DeleteObjectsCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { mockClient } from "aws-sdk-client-mock";
import { S3FileObjects } from "../../../shared/files/objects";

// The attachments bucket in AWS: a presigned upload S3 accepts (the SDK's default checksum of an
// empty body must not be signed into it) and that cannot replace an object (If-None-Match signed).

beforeEach(() => {
  vi.stubEnv("AWS_REGION", "eu-west-1");
  vi.stubEnv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE");
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", "secret");
});
afterEach(() => vi.unstubAllEnvs());

describe("S3FileObjects", () => {
  it("presigns a write-once upload: length, type and If-None-Match signed, no checksum of an empty body", async () => {
    const grant = await new S3FileObjects("files", { writeOnce: true }).uploadUrl("users/a/x", "text/csv", 42, 900);
    const url = new URL(grant.url);
    expect(url.searchParams.get("X-Amz-SignedHeaders")!.split(";")).toEqual(
      expect.arrayContaining(["content-length", "content-type", "if-none-match"]),
    );
    expect([...url.searchParams.keys()].filter((k) => k.toLowerCase().startsWith("x-amz-checksum"))).toEqual([]);
    expect(grant.headers).toEqual({ "content-type": "text/csv", "if-none-match": "*" });
  });

  it("presigns a replaceable upload for a bucket that is not write-once (documents)", async () => {
    const grant = await new S3FileObjects("docs").uploadUrl("a.md", "text/markdown", 5, 900);
    const url = new URL(grant.url);
    expect(url.searchParams.get("X-Amz-SignedHeaders")).not.toContain("if-none-match");
    expect([...url.searchParams.keys()].filter((k) => k.toLowerCase().startsWith("x-amz-checksum"))).toEqual([]);
    expect(grant.headers).toEqual({ "content-type": "text/markdown" });
  });

  it("writes its own objects once too", async () => {
    const s3 = mockClient(S3Client);
    s3.on(PutObjectCommand).resolves({});
    try {
      await new S3FileObjects("files", { writeOnce: true }).write("users/a/y", new Uint8Array([1]), "image/png");
      expect(s3.commandCalls(PutObjectCommand)[0]!.args[0].input).toMatchObject({ Key: "users/a/y", IfNoneMatch: "*" });
    } finally {
      s3.restore();
    }
  });

  it("fails a delete that S3 answers 200 with keys it could not delete (DeleteObjects' Errors), under a prefix too", async () => {
    const s3 = mockClient(S3Client);
    // As S3 documents a quiet multi-object delete: 200, and only the keys that failed, with their code.
    s3.on(DeleteObjectsCommand).resolves({
      Errors: [{ Key: "users/a/x", Code: "AccessDenied", Message: "Access Denied" }],
    });
    s3.on(ListObjectsV2Command).resolves({ Contents: [{ Key: "users/a/x" }, { Key: "users/a/y" }] });
    try {
      const objects = new S3FileObjects("files");
      await expect(objects.delete(["users/a/x", "users/a/y"])).rejects.toThrow(
        /did not delete 1 of 2 objects: users\/a\/x \(AccessDenied\)/,
      );
      await expect(objects.deleteUnder("users/a/")).rejects.toThrow(/AccessDenied/);
      // A passing fault is worth a retry: 503, as a throttle is answered.
      s3.on(DeleteObjectsCommand).resolves({ Errors: [{ Key: "users/a/x", Code: "SlowDown" }] });
      await expect(objects.delete(["users/a/x"])).rejects.toMatchObject({ status: 503, code: "service_unavailable" });
      // A clean answer is a clean delete.
      s3.on(DeleteObjectsCommand).resolves({});
      await expect(objects.delete(["users/a/x"])).resolves.toBeUndefined();
    } finally {
      s3.restore();
    }
  });
});
