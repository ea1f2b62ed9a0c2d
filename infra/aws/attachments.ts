import { Duration, RemovalPolicy, Stack, Validations, type CfnElement } from "aws-cdk-lib";
import { AnyPrincipal, Effect, PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { Function as LambdaFunction } from "aws-cdk-lib/aws-lambda";
import { BlockPublicAccess, Bucket, BucketEncryption, EventType, HttpMethods } from "aws-cdk-lib/aws-s3";
import { LambdaDestination } from "aws-cdk-lib/aws-s3-notifications";
import { Construct } from "constructs";

/** Every object is under users/<user>/sessions/<session>/<file> (shared/files/keys.ts). */
export const USERS_PREFIX = "users/";
/** A user's large exports: users/<user>/exports/<export>.json. */
const EXPORTS_OBJECTS = `${USERS_PREFIX}*/exports/*`;

/** What a function may do with attachments: each grant of the manifest names one of these. */
export type AttachmentAccess = "files" | "chat" | "delete" | "read" | "erase";

const ACTIONS: Record<AttachmentAccess, string[]> = {
  // A presigned URL acts with its signer's permissions: PutObject for uploads, GetObject for
  // downloads and the completion check, DeleteObject for DELETE and rejected uploads.
  files: ["s3:PutObject", "s3:GetObject", "s3:DeleteObject"],
  // A chat turn reads its session's files and stores the images a message carries inline (a PUT
  // the bucket takes only onto no object, so it cannot replace one).
  chat: ["s3:GetObject", "s3:PutObject"],
  delete: ["s3:DeleteObject"],
  // The data function reads the files it is asked about; it writes and deletes nothing.
  read: ["s3:GetObject"],
  // A user's export signs download links (GetObject); erasure lists what is under the user's folder
  // too, since an upload never completed has no record (ListBucket, on the bucket: grant below).
  erase: ["s3:DeleteObject", "s3:GetObject"],
};

/**
 * Files of chat sessions: a private, encrypted, SSL-only bucket whose objects expire, under
 * per-user prefixes. Functions get named object actions on that prefix only (no List, no bucket
 * actions), each as the manifest's grants say; the upload function hears each new object.
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
          "Objects are per user and session under users/; each function gets named object actions on that prefix only (no List, no bucket actions).",
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
    fn.addToRolePolicy(
      new PolicyStatement({ actions: ACTIONS[access], resources: [this.bucket.arnForObjects(`${USERS_PREFIX}*`)] }),
    );
    if (access === "erase") {
      fn.addToRolePolicy(
        new PolicyStatement({
          actions: ["s3:ListBucket"],
          resources: [this.bucket.bucketArn],
          conditions: { StringLike: { "s3:prefix": [`${USERS_PREFIX}*`] } },
        }),
      );
      // An export too large to answer inline is written to the user's exports folder (shared/files/keys.ts).
      fn.addToRolePolicy(
        new PolicyStatement({ actions: ["s3:PutObject"], resources: [this.bucket.arnForObjects(EXPORTS_OBJECTS)] }),
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
