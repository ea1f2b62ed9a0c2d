import { Duration, RemovalPolicy, Stack, Validations, type CfnElement } from "aws-cdk-lib";
import { AnyPrincipal, Effect, PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { Function as LambdaFunction } from "aws-cdk-lib/aws-lambda";
import { BlockPublicAccess, Bucket, BucketEncryption, EventType, HttpMethods } from "aws-cdk-lib/aws-s3";
import { LambdaDestination } from "aws-cdk-lib/aws-s3-notifications";
import { Construct } from "constructs";
import { attachmentPermissions, EXPORTS_OBJECTS, USERS_PREFIX, type AttachmentAccess } from "../grants";

/**
 * Files of chat sessions: a private, encrypted, SSL-only bucket whose objects expire, under
 * per-user prefixes. Functions get named object actions on that prefix only, and those that read
 * may list the bucket (infra/grants.ts says why), each as the manifest's grants say; the upload
 * function hears each new object.
 */
export class Attachments extends Construct {
  readonly bucket: Bucket;

  constructor(scope: Construct, id: string, props: { expireAfterDays: number }) {
    super(scope, id);
    this.bucket = new Bucket(this, "Bucket", {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [
        { expiration: Duration.days(props.expireAfterDays), abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      // Browsers PUT to the presigned URL and GET the download URL directly.
      cors: [{ allowedMethods: [HttpMethods.PUT, HttpMethods.GET], allowedOrigins: ["*"], allowedHeaders: ["*"] }],
    });
    // Objects are written once: a file's bytes are checked when they land, so no PUT may replace
    // them, whoever signs it. Every presigned upload and the functions' own writes send
    // If-None-Match: * (shared/files/objects.ts), which S3 then enforces (412 on an existing key).
    this.bucket.addToResourcePolicy(
      new PolicyStatement({
        effect: Effect.DENY,
        principals: [new AnyPrincipal()],
        actions: ["s3:PutObject"],
        resources: [this.bucket.arnForObjects(`${USERS_PREFIX}*`)],
        conditions: { Null: { "s3:if-none-match": "true" } },
      }),
    );
    const bucketArn = `${Stack.of(this).getLogicalId(this.bucket.node.defaultChild as CfnElement)}.Arn`;
    // On the stack: the grants sit in the policies of functions outside this construct.
    Validations.of(Stack.of(this)).acknowledge(
      {
        id: `AwsSolutions-IAM5[Resource::<${bucketArn}>/${USERS_PREFIX}*]`,
        reason:
          "Objects are per user and session under users/; each function gets named object actions on that prefix only (and, where it reads, listing, so a missing key reads as 404).",
      },
      {
        id: `AwsSolutions-IAM5[Resource::<${bucketArn}>/${EXPORTS_OBJECTS}]`,
        reason: "A user's export is written under that user's own exports folder; only the user-data function may.",
      },
      {
        id: "AwsSolutions-S1",
        reason:
          "Attachments are short-lived user uploads that expire by lifecycle; object-level audit belongs to CloudTrail data events, an account choice.",
      },
    );
  }

  grant(fn: LambdaFunction, access: AttachmentAccess) {
    fn.addEnvironment("ATTACHMENTS_BUCKET", this.bucket.bucketName);
    // One statement per key pattern, in the order infra/grants.ts gives them. Listing is an action on
    // the bucket, not its objects (hence its own `list:` entry), held to a prefix by condition unless
    // the pattern is `*`.
    const byKeys = new Map<string, string[]>();
    for (const { action, keys } of attachmentPermissions(access)) {
      const key = action === "s3:ListBucket" ? `list:${keys}` : keys;
      byKeys.set(key, [...(byKeys.get(key) ?? []), action]);
    }
    for (const [key, actions] of byKeys) {
      const prefix = key.startsWith("list:") ? key.slice("list:".length) : undefined;
      fn.addToRolePolicy(
        prefix === undefined
          ? new PolicyStatement({ actions, resources: [this.bucket.arnForObjects(key)] })
          : new PolicyStatement({
              actions,
              resources: [this.bucket.bucketArn],
              ...(prefix === "*" ? {} : { conditions: { StringLike: { "s3:prefix": [prefix] } } }),
            }),
      );
    }
  }

  /** The function settles each upload when its object lands (the complete route does the same). */
  notify(fn: LambdaFunction) {
    this.bucket.addEventNotification(EventType.OBJECT_CREATED_PUT, new LambdaDestination(fn), {
      prefix: USERS_PREFIX,
    });
  }
}
