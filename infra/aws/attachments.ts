import { Duration, RemovalPolicy, Stack, Validations, type CfnElement } from "aws-cdk-lib";
import { LambdaIntegration, type IResource, type MethodOptions } from "aws-cdk-lib/aws-apigateway";
import type { ITableV2 } from "aws-cdk-lib/aws-dynamodb";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { Function as LambdaFunction, FunctionOptions } from "aws-cdk-lib/aws-lambda";
import { BlockPublicAccess, Bucket, BucketEncryption, EventType, HttpMethods } from "aws-cdk-lib/aws-s3";
import { LambdaDestination } from "aws-cdk-lib/aws-s3-notifications";
import { Construct } from "constructs";

/** Every object is under users/<user>/sessions/<session>/<file> (shared/files/keys.ts). */
export const USERS_PREFIX = "users/";

export interface AttachmentsProps {
  /** days after which an attachment object expires */
  expireAfterDays: number;
  checkpointTable: ITableV2;
  environment: Record<string, string>;
  /** the stack's function factory (bundling, runtime, logs, alarms) */
  makeFunction: (id: string, entry: string, props: FunctionOptions & { handler?: string }) => LambdaFunction;
  /** the chat functions: they read images and data files of their users */
  chatFunctions: LambdaFunction[];
  /** deletes a session's files with the session */
  sessionsFunction: LambdaFunction;
}

/**
 * Files of chat sessions: a private, encrypted, SSL-only bucket whose objects expire, under
 * per-user prefixes; the files API (presigned upload/download URLs), and the bucket's
 * ObjectCreated notification settling each upload. Grants are per prefix and per action:
 * the files function gets only what presigning and checking need, the chat functions only
 * GetObject under users/, the sessions function only DeleteObject under users/.
 */
export class Attachments extends Construct {
  readonly bucket: Bucket;
  readonly filesFunction: LambdaFunction;
  readonly uploadFunction: LambdaFunction;

  constructor(scope: Construct, id: string, props: AttachmentsProps) {
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
    const environment = { ...props.environment, ATTACHMENTS_BUCKET: this.bucket.bucketName };
    const objects = this.bucket.arnForObjects(`${USERS_PREFIX}*`);

    this.filesFunction = props.makeFunction("FilesFunction", "files.ts", {
      environment,
      timeout: Duration.seconds(29),
      memorySize: 1024,
    });
    // A presigned URL acts with its signer's permissions: PutObject for uploads, GetObject for
    // downloads and the completion check, DeleteObject for DELETE and rejected uploads.
    this.filesFunction.addToRolePolicy(
      new PolicyStatement({ actions: ["s3:PutObject", "s3:GetObject", "s3:DeleteObject"], resources: [objects] }),
    );
    props.checkpointTable.grantReadWriteData(this.filesFunction);

    this.uploadFunction = props.makeFunction("FileUploadedFunction", "files.ts", {
      handler: "index.notificationHandler",
      environment,
      timeout: Duration.seconds(60),
      memorySize: 1024,
    });
    this.uploadFunction.addToRolePolicy(
      new PolicyStatement({ actions: ["s3:PutObject", "s3:GetObject", "s3:DeleteObject"], resources: [objects] }),
    );
    props.checkpointTable.grantReadWriteData(this.uploadFunction);
    this.bucket.addEventNotification(EventType.OBJECT_CREATED_PUT, new LambdaDestination(this.uploadFunction), {
      prefix: USERS_PREFIX,
    });

    for (const fn of props.chatFunctions) {
      fn.addEnvironment("ATTACHMENTS_BUCKET", this.bucket.bucketName);
      fn.addToRolePolicy(new PolicyStatement({ actions: ["s3:GetObject"], resources: [objects] }));
    }
    props.sessionsFunction.addEnvironment("ATTACHMENTS_BUCKET", this.bucket.bucketName);
    props.sessionsFunction.addToRolePolicy(new PolicyStatement({ actions: ["s3:DeleteObject"], resources: [objects] }));

    const bucketArn = `${Stack.of(this).getLogicalId(this.bucket.node.defaultChild as CfnElement)}.Arn`;
    // On the stack: the grants sit in the policies of functions outside this construct.
    Validations.of(Stack.of(this)).acknowledge(
      {
        id: `AwsSolutions-IAM5[Resource::<${bucketArn}>/${USERS_PREFIX}*]`,
        reason:
          "Objects are per user and session under users/; each function gets named object actions on that prefix only (no List, no bucket actions).",
      },
      {
        id: "AwsSolutions-S1",
        reason:
          "Attachments are short-lived user uploads that expire by lifecycle; object-level audit belongs to CloudTrail data events, an account choice.",
      },
    );
  }

  /**
   * /api/sessions/{id}/files (POST, GET), .../files/{file_id} (DELETE), .../complete (POST),
   * /api/files/{file_id} (GET), on the API's authorized resources.
   */
  addRoutes(api: IResource, session: IResource, options?: MethodOptions) {
    const integration = new LambdaIntegration(this.filesFunction);
    const files = session.addResource("files");
    files.addMethod("POST", integration, options);
    files.addMethod("GET", integration, options);
    const file = files.addResource("{file_id}");
    file.addMethod("DELETE", integration, options);
    file.addResource("complete").addMethod("POST", integration, options);
    api.addResource("files").addResource("{file_id}").addMethod("GET", integration, options);
  }
}
