import { App } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { AgentStack } from "../../infra/aws/stack";
import { BLOCKS_ALL_PUBLIC_ACCESS, NO_BUNDLING, PRODUCTION_SETTINGS } from "../support/deployment";

const stack = new AgentStack(new App({ context: NO_BUNDLING }), "Files", {
  settings: { ...PRODUCTION_SETTINGS, attachmentsExpireDays: 7 },
});
const template = Template.fromStack(stack);
const { attachments } = stack;
const filesFunction = stack.functions.get("files")!;
const uploadFunction = stack.functions.get("file-uploaded")!;
const logicalId = (c: { node: { defaultChild?: unknown } }) => stack.getLogicalId(c.node.defaultChild as never);
const bucketId = logicalId(attachments.bucket);

/** Every statement of a function's role policies. */
function statementsOf(fn: typeof stack.chatFunction) {
  const roleRef = stack.resolve((fn.role!.node.defaultChild as unknown as { ref: string }).ref);
  const policies = template.findResources("AWS::IAM::Policy", { Properties: { Roles: [roleRef] } });
  return Object.values(policies).flatMap(
    (p) => (p as { Properties: { PolicyDocument: { Statement: any[] } } }).Properties.PolicyDocument.Statement,
  );
}
/** The statements that mention the attachments bucket. */
const onBucket = (fn: typeof stack.chatFunction) =>
  statementsOf(fn).filter((s) => JSON.stringify(s.Resource).includes(bucketId));
const usersPrefix = { "Fn::Join": ["", [{ "Fn::GetAtt": [bucketId, "Arn"] }, "/users/*"]] };
/** Listing the bucket, so a GetObject of a missing key is 404, not 403 (infra/grants.ts). */
const listing = { Effect: "Allow", Action: "s3:ListBucket", Resource: { "Fn::GetAtt": [bucketId, "Arn"] } };

describe("attachments bucket", () => {
  it("is private, encrypted, SSL-only, and expires objects by the setting", () => {
    const props = template.toJSON().Resources[bucketId].Properties;
    expect(props.PublicAccessBlockConfiguration).toEqual(BLOCKS_ALL_PUBLIC_ACCESS);
    expect(props.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault).toEqual({
      SSEAlgorithm: "AES256",
    });
    expect(props.LifecycleConfiguration.Rules).toEqual([
      expect.objectContaining({ ExpirationInDays: 7, Status: "Enabled" }),
    ]);
    template.hasResourceProperties("AWS::S3::BucketPolicy", {
      Bucket: { Ref: bucketId },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: "Deny", Condition: { Bool: { "aws:SecureTransport": "false" } } }),
        ]),
      },
    });
  });

  it("notifies the upload function of objects created under users/", () => {
    template.hasResourceProperties("Custom::S3BucketNotifications", {
      BucketName: { Ref: bucketId },
      NotificationConfiguration: {
        LambdaFunctionConfigurations: [
          {
            Events: ["s3:ObjectCreated:Put"],
            Filter: { Key: { FilterRules: [{ Name: "prefix", Value: "users/" }] } },
            LambdaFunctionArn: { "Fn::GetAtt": [logicalId(uploadFunction), "Arn"] },
          },
        ],
      },
    });
    template.hasResourceProperties("AWS::Lambda::Function", {
      Environment: { Variables: Match.objectLike({ ATTACHMENTS_BUCKET: { Ref: bucketId } }) },
    });
  });

  it("grants the chat functions GetObject, and PutObject for inline images, under users/ only, and listing", () => {
    for (const fn of [stack.chatFunction, stack.chatStreamFunction]) {
      expect(onBucket(fn)).toEqual([
        { Effect: "Allow", Action: ["s3:GetObject", "s3:PutObject"], Resource: usersPrefix },
        listing,
      ]);
    }
  });

  it("refuses any PUT under users/ that could replace an object (no If-None-Match), whoever signs it", () => {
    template.hasResourceProperties("AWS::S3::BucketPolicy", {
      Bucket: { Ref: bucketId },
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Effect: "Deny",
            Principal: { AWS: "*" },
            Action: "s3:PutObject",
            Resource: usersPrefix,
            Condition: { Null: { "s3:if-none-match": "true" } },
          },
        ]),
      },
    });
  });

  it("grants the files function only the object actions presigning and checking need, under users/, and listing", () => {
    expect(onBucket(filesFunction)).toEqual([
      { Effect: "Allow", Action: ["s3:PutObject", "s3:GetObject", "s3:DeleteObject"], Resource: usersPrefix },
      listing,
    ]);
  });

  it("grants the sessions function DeleteObject under users/ only; other functions nothing", () => {
    expect(onBucket(stack.sessionsFunction)).toEqual([
      { Effect: "Allow", Action: "s3:DeleteObject", Resource: usersPrefix },
    ]);
    for (const fn of [
      stack.memoriesFunction,
      stack.ingestFunction,
      stack.extractionFunction,
      stack.supportWorkerFunction!,
    ])
      expect(onBucket(fn)).toEqual([]);
  });

  it("routes the files API behind the authorizer", () => {
    const filesMethods = Object.values(template.findResources("AWS::ApiGateway::Method")).filter((m: any) =>
      JSON.stringify(m.Properties.Integration?.Uri ?? "").includes(logicalId(filesFunction)),
    ) as any[];
    expect(filesMethods.map((m) => m.Properties.HttpMethod).sort()).toEqual(["DELETE", "GET", "GET", "POST", "POST"]);
    for (const m of filesMethods) expect(m.Properties.AuthorizationType).toBe("CUSTOM");
  });
});
