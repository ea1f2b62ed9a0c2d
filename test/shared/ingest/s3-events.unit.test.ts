import { encodeS3Key, s3Notification } from "../../../infra/local/s3-events";
import { decodeS3Key, parseS3Notification } from "../../../shared/ingest/s3-events";

// A notification as AWS documents it (event structure, version 2.1), with an encoded key.
const awsExample = {
  Records: [
    {
      eventVersion: "2.1",
      eventSource: "aws:s3",
      awsRegion: "us-west-2",
      eventTime: "1970-01-01T00:00:00.000Z",
      eventName: "ObjectCreated:Put",
      userIdentity: { principalId: "AIDAJDPLRKLG7UEXAMPLE" },
      requestParameters: { sourceIPAddress: "172.16.0.1" },
      responseElements: {
        "x-amz-request-id": "C3D13FE58DE4C810",
        "x-amz-id-2": "FMyUVURIY8/IgAtTv8xRjskZQpcIZ9KG4V5Wp6S7S/JRWeUWerMUE5JgHvANOjpD",
      },
      s3: {
        s3SchemaVersion: "1.0",
        configurationId: "testConfigRule",
        bucket: {
          name: "amzn-s3-demo-bucket",
          ownerIdentity: { principalId: "A3NL1KOZZKExample" },
          arn: "arn:aws:s3:::amzn-s3-demo-bucket",
        },
        object: {
          key: "docs/red+flower%28v2%29.md",
          size: 1024,
          eTag: "d41d8cd98f00b204e9800998ecf8427e",
          versionId: "096fKKXTRTtl3on89fVO.nfljtsv6qko",
          sequencer: "0055AED6DCD90281E5",
        },
      },
    },
  ],
};

describe("S3 notifications", () => {
  it("decodes keys: '+' is a space, %XX is a byte", () => {
    expect(parseS3Notification(JSON.stringify(awsExample))).toEqual([
      {
        kind: "created",
        bucket: "amzn-s3-demo-bucket",
        key: "docs/red flower(v2).md",
        size: 1024,
        etag: "d41d8cd98f00b204e9800998ecf8427e",
        sequencer: "0055AED6DCD90281E5",
      },
    ]);
    expect(decodeS3Key("caf%C3%A9+menu%2B1.txt")).toBe("café menu+1.txt");
    expect(decodeS3Key(encodeS3Key("red flower + café/é.md"))).toBe("red flower + café/é.md");
  });

  it("reads removals and ignores other event types", () => {
    const removed = JSON.parse(
      s3Notification({ eventName: "ObjectRemoved:Delete", bucket: "b", key: "a b.md", sequencer: "0A" }),
    );
    expect(parseS3Notification(JSON.stringify(removed))).toEqual([
      { kind: "removed", bucket: "b", key: "a b.md", sequencer: "0A" },
    ]);
    removed.Records[0].eventName = "ObjectRestore:Completed";
    expect(parseS3Notification(JSON.stringify(removed))).toEqual([]);
  });

  // Every key under the prefix is announced: the console's "Create folder" makes a key ending in /.
  it("ignores a folder's marker object", () => {
    const marker = s3Notification({
      eventName: "ObjectCreated:Put",
      bucket: "b",
      key: "docs/guides/",
      sequencer: "0B",
    });
    expect(parseS3Notification(marker)).toEqual([]);
    const encoded = JSON.parse(marker);
    encoded.Records[0].s3.object.key = "docs/guides%2F";
    expect(parseS3Notification(JSON.stringify(encoded))).toEqual([]);
  });

  it("does not pin eventVersion", () => {
    const v23 = structuredClone(awsExample);
    v23.Records[0]!.eventVersion = "2.3";
    expect(parseS3Notification(JSON.stringify(v23))).toHaveLength(1);
  });

  it("treats S3's test event as no work", () => {
    const test = {
      Service: "Amazon S3",
      Event: "s3:TestEvent",
      Time: "2014-10-13T15:57:02.089Z",
      Bucket: "amzn-s3-demo-bucket",
      RequestId: "5582815E1AEA5ADF",
      HostId: "8cLeGAmw098X5cv4Zkwcmo8vvZa3eH3eKxsPzbB9wrR+YstdA6Knx4Ip8EXAMPLE",
    };
    expect(parseS3Notification(JSON.stringify(test))).toEqual([]);
  });

  it("throws on malformed bodies so they are retried and dead-lettered", () => {
    expect(() => parseS3Notification("{oops")).toThrow();
    expect(() => parseS3Notification(JSON.stringify({ Records: [] }))).toThrow();
    const noSequencer = structuredClone(awsExample) as any;
    delete noSequencer.Records[0].s3.object.sequencer;
    expect(() => parseS3Notification(JSON.stringify(noSequencer))).toThrow(/sequencer/);
  });
});
