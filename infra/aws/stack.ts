import { Duration, RemovalPolicy, Stack, Tags, type CfnElement, type StackProps } from "aws-cdk-lib";
import {
  AccessLogFormat,
  ApiKey,
  ApiKeySourceType,
  Period,
  LambdaIntegration,
  RequestValidator,
  ResponseType,
  LogGroupLogDestination,
  MethodLoggingLevel,
  ResponseTransferMode,
  RestApi,
  TokenAuthorizer,
  type MethodOptions,
} from "aws-cdk-lib/aws-apigateway";
import { AttributeType, Billing, TableV2 } from "aws-cdk-lib/aws-dynamodb";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import {
  Architecture,
  Function as LambdaFunction,
  Runtime,
  Tracing,
  type FunctionOptions,
} from "aws-cdk-lib/aws-lambda";
import { functionCode } from "./bundle/code";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { Secret, type ISecret } from "aws-cdk-lib/aws-secretsmanager";
import { Alarm, ComparisonOperator, MathExpression, TreatMissingData } from "aws-cdk-lib/aws-cloudwatch";
import { SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import { IDEMPOTENCY_TABLE } from "../../shared/idempotency";
import { SUPPORTED_EXTENSIONS } from "../../shared/documents/extract-text";
import { BlockPublicAccess, Bucket, BucketEncryption, EventType } from "aws-cdk-lib/aws-s3";
import { SqsDestination } from "aws-cdk-lib/aws-s3-notifications";
import type { Construct } from "constructs";
import { join } from "node:path";
import { CHECKPOINT_TABLE } from "../../shared/stores/checkpoint-table";
import { acknowledgeNagFindings } from "./nag";
import { apiModelSchema } from "./api-models";
import { chatRequest } from "../../shared/chat-request";
import { loadConfig } from "../../shared/config";
import { MAX_RECEIVES } from "../../shared/sqs-batch";
import { readSettings, type StackSettings } from "./settings";

const FUNCTIONS = join(import.meta.dirname, "../../functions");

/** The agent backend. Grows resource by resource with the functions that use them. */
export class AgentStack extends Stack {
  readonly checkpointTable: TableV2;
  readonly api: RestApi;
  readonly chatFunction: LambdaFunction;
  readonly chatStreamFunction: LambdaFunction;
  readonly sessionsFunction: LambdaFunction;
  readonly memoriesFunction: LambdaFunction;
  readonly extractionFunction: LambdaFunction;
  readonly extractionQueue: Queue;
  readonly extractionDeadLetters: Queue;
  readonly idempotencyTable: TableV2;
  readonly documentsBucket: Bucket;
  readonly ingestQueue: Queue;
  readonly ingestDeadLetters: Queue;
  readonly ingestFunction: LambdaFunction;
  readonly intercomWebhookFunction: LambdaFunction;
  readonly supportWorkerFunction: LambdaFunction;
  readonly supportQueue: Queue;
  readonly supportDeadLetters: Queue;
  readonly authorizerFunction: LambdaFunction;
  /** X-Ray tracing for the API and every function, switched by the `tracing` context value */
  private readonly tracing: boolean;
  /** LangSmith's client in the bundles, switched by the `langsmith` context value */
  private readonly langsmith: boolean;

  constructor(scope: Construct, id: string, props?: StackProps & { settings?: StackSettings }) {
    super(scope, id, props);
    const settings = props?.settings ?? readSettings(this);
    this.tracing = settings.tracing ?? false;
    this.langsmith = settings.langsmith ?? false;

    // Graph state: one item per checkpoint, write and stored message (graph/checkpoint).
    // On-demand billing because chat traffic is spiky; PITR because a thread's state
    // is user data; TTL so abandoned threads age out.
    this.checkpointTable = new TableV2(this, "CheckpointTable", {
      partitionKey: { name: CHECKPOINT_TABLE.partitionKey, type: AttributeType.STRING },
      sortKey: { name: CHECKPOINT_TABLE.sortKey, type: AttributeType.STRING },
      billing: Billing.onDemand(),
      timeToLiveAttribute: CHECKPOINT_TABLE.ttlAttribute,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const supabaseKey: ISecret = settings.supabaseSecretArn
      ? Secret.fromSecretCompleteArn(this, "SupabaseServiceRoleKey", settings.supabaseSecretArn)
      : new Secret(this, "SupabaseServiceRoleKey", {
          description:
            "Supabase service-role key for the agent backend: replace the generated value with the project's key",
        });

    const environment = {
      CHECKPOINT_TABLE: this.checkpointTable.tableName,
      SUPABASE_URL: settings.supabaseUrl,
      SUPABASE_SERVICE_ROLE_KEY_SECRET_ARN: supabaseKey.secretArn,
      ...(settings.bedrockModelId ? { BEDROCK_MODEL_ID: settings.bedrockModelId } : {}),
      ...(settings.bedrockEmbeddingModelId ? { BEDROCK_EMBEDDING_MODEL_ID: settings.bedrockEmbeddingModelId } : {}),
      ...(settings.checkpointTtlDays ? { CHECKPOINT_TTL_DAYS: String(settings.checkpointTtlDays) } : {}),
      ...(settings.embeddingDimension ? { EMBEDDING_DIM: String(settings.embeddingDimension) } : {}),
    };

    // Memory extraction: a queue between the chat reply and the extraction function.
    // The visibility timeout is 6x the function timeout, as AWS advises for Lambda consumers,
    // so a slow batch is not handed to a second invocation while the first still runs.
    const extractionTimeout = Duration.seconds(60);
    ({ queue: this.extractionQueue, deadLetters: this.extractionDeadLetters } = this.queueWithDeadLetters(
      "MemoryExtraction",
      extractionTimeout,
      "Turns whose memory extraction failed 3 times are waiting in the dead-letter queue",
    ));

    // Powertools idempotency records for queue consumers: a redelivered turn is processed once.
    this.idempotencyTable = new TableV2(this, "IdempotencyTable", {
      partitionKey: { name: IDEMPOTENCY_TABLE.partitionKey, type: AttributeType.STRING },
      billing: Billing.onDemand(),
      timeToLiveAttribute: IDEMPOTENCY_TABLE.ttlAttribute,
      removalPolicy: RemovalPolicy.DESTROY,
    });

    this.chatFunction = this.fn("ChatFunction", "chat.ts", {
      environment: { ...environment, EXTRACTION_QUEUE_URL: this.extractionQueue.queueUrl },
      timeout: Duration.seconds(29),
      memorySize: 1024,
    });
    this.extractionQueue.grantSendMessages(this.chatFunction);
    // The same turn as server-sent events; a longer timeout since a client may read slowly.
    this.chatStreamFunction = this.fn("ChatStreamFunction", "chat-stream.ts", {
      environment: { ...environment, EXTRACTION_QUEUE_URL: this.extractionQueue.queueUrl },
      timeout: Duration.seconds(120),
      memorySize: 1024,
    });
    this.extractionQueue.grantSendMessages(this.chatStreamFunction);

    this.extractionFunction = this.fn("MemoryExtractionFunction", "memory-extraction.ts", {
      environment: { ...environment, IDEMPOTENCY_TABLE: this.idempotencyTable.tableName },
      timeout: extractionTimeout,
      memorySize: 1024,
    });
    this.idempotencyTable.grantReadWriteData(this.extractionFunction);
    supabaseKey.grantRead(this.extractionFunction);
    // Batches of 10 with per-record failures; at most `queueConcurrency` concurrent invocations,
    // so a burst of chat traffic cannot exhaust Bedrock quotas or Supabase connections.
    this.extractionFunction.addEventSource(
      new SqsEventSource(this.extractionQueue, {
        batchSize: 10,
        maxBatchingWindow: Duration.seconds(2),
        reportBatchItemFailures: true,
        maxConcurrency: settings.queueConcurrency ?? 5,
      }),
    );
    for (const fn of [this.chatFunction, this.chatStreamFunction]) {
      this.checkpointTable.grantReadWriteData(fn);
      supabaseKey.grantRead(fn);
    }
    const models = [settings.bedrockModelId, settings.bedrockEmbeddingModelId].filter((m): m is string => Boolean(m));
    if (models.length > 0) {
      const invoke = new PolicyStatement({
        actions: ["bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream"],
        resources: models.flatMap((m) => bedrockModelArns(this, m)),
      });
      this.chatFunction.addToRolePolicy(invoke);
      this.chatStreamFunction.addToRolePolicy(invoke);
      this.extractionFunction.addToRolePolicy(invoke);
    }

    this.sessionsFunction = this.fn("SessionsFunction", "sessions.ts", {
      environment,
      timeout: Duration.seconds(10),
      memorySize: 512,
    });
    supabaseKey.grantRead(this.sessionsFunction);
    // Ownership checks, and deleteThread when a session is deleted.
    this.checkpointTable.grantReadWriteData(this.sessionsFunction);

    this.memoriesFunction = this.fn("MemoriesFunction", "memories.ts", {
      environment,
      timeout: Duration.seconds(10),
      memorySize: 512,
    });
    supabaseKey.grantRead(this.memoriesFunction);

    // Knowledge base: documents dropped under the prefix are ingested through a queue.
    this.documentsBucket = new Bucket(this, "DocumentsBucket", {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      versioned: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const ingestTimeout = Duration.seconds(120);
    ({ queue: this.ingestQueue, deadLetters: this.ingestDeadLetters } = this.queueWithDeadLetters(
      "Ingest",
      ingestTimeout,
      "Document events that failed to ingest 3 times are waiting in the dead-letter queue",
    ));
    const notify = new SqsDestination(this.ingestQueue);
    for (const suffix of SUPPORTED_EXTENSIONS) {
      for (const event of [EventType.OBJECT_CREATED, EventType.OBJECT_REMOVED]) {
        this.documentsBucket.addEventNotification(event, notify, { prefix: settings.documentsPrefix, suffix });
      }
    }
    this.ingestFunction = this.fn("IngestFunction", "ingest.ts", {
      environment,
      timeout: ingestTimeout,
      memorySize: 1536,
    });
    this.documentsBucket.grantRead(this.ingestFunction, `${settings.documentsPrefix}*`);
    supabaseKey.grantRead(this.ingestFunction);
    this.ingestFunction.addEventSource(
      new SqsEventSource(this.ingestQueue, {
        batchSize: 5,
        reportBatchItemFailures: true,
        maxConcurrency: settings.queueConcurrency ?? 5,
      }),
    );
    if (settings.bedrockEmbeddingModelId) {
      this.ingestFunction.addToRolePolicy(
        new PolicyStatement({
          actions: ["bedrock:InvokeModel"],
          resources: bedrockModelArns(this, settings.bedrockEmbeddingModelId),
        }),
      );
    }

    // Intercom: the webhook verifies and queues; the worker runs the support graph.
    const intercomToken = new Secret(this, "IntercomAccessToken", {
      description: "Intercom access token for the support agent: replace the generated value",
    });
    const intercomClientSecret = new Secret(this, "IntercomClientSecret", {
      description: "Intercom app client secret, which signs webhooks: replace the generated value",
    });
    const supportTimeout = Duration.seconds(120);
    ({ queue: this.supportQueue, deadLetters: this.supportDeadLetters } = this.queueWithDeadLetters(
      "Support",
      supportTimeout,
      "Intercom conversations the support agent failed to handle 3 times are waiting in the dead-letter queue",
    ));
    this.intercomWebhookFunction = this.fn("IntercomWebhookFunction", "intercom-webhook.ts", {
      environment: {
        ...environment,
        IDEMPOTENCY_TABLE: this.idempotencyTable.tableName,
        SUPPORT_QUEUE_URL: this.supportQueue.queueUrl,
        INTERCOM_CLIENT_SECRET_ARN: intercomClientSecret.secretArn,
      },
      timeout: Duration.seconds(10),
      memorySize: 512,
    });
    intercomClientSecret.grantRead(this.intercomWebhookFunction);
    this.supportQueue.grantSendMessages(this.intercomWebhookFunction);
    this.idempotencyTable.grantReadWriteData(this.intercomWebhookFunction);

    this.supportWorkerFunction = this.fn("SupportWorkerFunction", "support-worker.ts", {
      environment: {
        ...environment,
        IDEMPOTENCY_TABLE: this.idempotencyTable.tableName,
        INTERCOM_ACCESS_TOKEN_SECRET_ARN: intercomToken.secretArn,
        ...(settings.intercomAdminId ? { INTERCOM_ADMIN_ID: settings.intercomAdminId } : {}),
      },
      timeout: supportTimeout,
      memorySize: 1024,
    });
    intercomToken.grantRead(this.supportWorkerFunction);
    if (models.length > 0) {
      this.supportWorkerFunction.addToRolePolicy(
        new PolicyStatement({
          actions: ["bedrock:InvokeModel"],
          resources: models.flatMap((m) => bedrockModelArns(this, m)),
        }),
      );
    }
    supabaseKey.grantRead(this.supportWorkerFunction);
    this.checkpointTable.grantReadWriteData(this.supportWorkerFunction);
    this.idempotencyTable.grantReadWriteData(this.supportWorkerFunction);
    this.supportWorkerFunction.addEventSource(
      new SqsEventSource(this.supportQueue, {
        batchSize: 5,
        reportBatchItemFailures: true,
        maxConcurrency: settings.queueConcurrency ?? 5,
      }),
    );

    const accessLogs = new LogGroup(this, "ApiAccessLogs", {
      retention: RetentionDays.THREE_MONTHS,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const apiKeys = settings.apiKeys ?? [];
    this.api = new RestApi(this, "Api", {
      description: "Agent backend API",
      // With API keys on, the authorizer names the key of each request (a client's own, or the
      // users' key for JWT callers), and API Gateway meters it against that key's usage plan.
      ...(apiKeys.length > 0 ? { apiKeySourceType: ApiKeySourceType.AUTHORIZER } : {}),
      deployOptions: {
        stageName: "v1",
        throttlingRateLimit: 50,
        throttlingBurstLimit: 100,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: AccessLogFormat.jsonWithStandardFields(),
        loggingLevel: MethodLoggingLevel.ERROR,
        tracingEnabled: this.tracing,
      },
    });
    // The gateway's own refusals (bad body, no token, throttled) in the handlers' error shape.
    for (const type of [ResponseType.DEFAULT_4XX, ResponseType.DEFAULT_5XX]) {
      this.api.addGatewayResponse(`${type.responseType}Response`, {
        type,
        templates: {
          "application/json": '{"error":{"code":"$context.error.responseType","message":$context.error.messageString}}',
        },
      });
    }
    // More than 5% of requests answered 5xx over 5 minutes.
    new Alarm(this, "Api5xxRate", {
      alarmDescription: "The API answered more than 5% of requests with 5xx in the last 5 minutes",
      metric: new MathExpression({
        expression: "IF(requests > 0, errors / requests * 100, 0)",
        usingMetrics: {
          errors: this.api.metricServerError({ period: Duration.minutes(5), statistic: "Sum" }),
          requests: this.api.metricCount({ period: Duration.minutes(5), statistic: "Sum" }),
        },
        period: Duration.minutes(5),
      }),
      threshold: 5,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    // Every /api route needs a bearer JWT from the configured OIDC issuer; its `sub` is the user.
    this.authorizerFunction = this.fn("AuthorizerFunction", "authorizer.ts", {
      environment: {
        ...(settings.oidcIssuer ? { OIDC_ISSUER: settings.oidcIssuer } : {}),
        ...(settings.oidcAudience ? { OIDC_AUDIENCE: settings.oidcAudience } : {}),
      },
      timeout: Duration.seconds(5),
      memorySize: 256,
    });
    const secured: MethodOptions = {
      authorizer: new TokenAuthorizer(this, "JwtAuthorizer", {
        handler: this.authorizerFunction,
        resultsCacheTtl: Duration.minutes(5),
      }),
      apiKeyRequired: apiKeys.length > 0,
    };
    if (apiKeys.length > 0) this.addApiKeys(apiKeys);
    const api = this.api.root.addResource("api", { defaultMethodOptions: secured });
    // Chat bodies are checked at the gateway against the handlers' own schema, so a malformed
    // request never reaches (or wakes) a function; the handlers still check everything.
    const chatBody: MethodOptions = {
      requestValidator: new RequestValidator(this, "RequestValidator", {
        restApi: this.api,
        validateRequestBody: true,
        validateRequestParameters: true,
      }),
      requestModels: {
        "application/json": this.api.addModel("ChatRequest", {
          contentType: "application/json",
          schema: apiModelSchema(chatRequest(loadConfig({}).MAX_MESSAGE_BYTES)),
        }),
      },
    };
    const chat = api.addResource("chat");
    chat.addMethod("POST", new LambdaIntegration(this.chatFunction), chatBody);
    chat
      .addResource("stream")
      .addMethod(
        "POST",
        new LambdaIntegration(this.chatStreamFunction, { responseTransferMode: ResponseTransferMode.STREAM }),
        chatBody,
      );
    const sessionsIntegration = new LambdaIntegration(this.sessionsFunction);
    const sessions = api.addResource("sessions");
    sessions.addMethod("GET", sessionsIntegration);
    const session = sessions.addResource("{id}");
    session.addMethod("DELETE", sessionsIntegration);
    session.addResource("messages").addMethod("GET", sessionsIntegration);
    const webhook = this.api.root.addResource("webhooks").addResource("intercom");
    const webhookIntegration = new LambdaIntegration(this.intercomWebhookFunction);
    webhook.addMethod("POST", webhookIntegration);
    webhook.addMethod("HEAD", webhookIntegration);
    const memories = api.addResource("memories");
    const memoriesIntegration = new LambdaIntegration(this.memoriesFunction);
    memories.addMethod("GET", memoriesIntegration);
    memories.addResource("{id}").addMethod("DELETE", memoriesIntegration);
    acknowledgeNagFindings(this, {
      documentsBucketArn: `${this.getLogicalId(this.documentsBucket.node.defaultChild as CfnElement)}.Arn`,
      documentsPrefix: settings.documentsPrefix,
      models: [settings.bedrockModelId, settings.bedrockEmbeddingModelId].filter((m): m is string => Boolean(m)),
      tracing: this.tracing,
    });
  }

  /**
   * Server-to-server API keys (`apiKeys` context): one key per client, tagged with its name and
   * whether it is trusted to name users, under a clients' usage plan (10 requests/s, burst 20,
   * 100,000 a day per key). JWT users are metered under one users' key, whose value the stack
   * generates into a secret for the authorizer; its plan only throttles, as the stage does.
   */
  private addApiKeys(clients: NonNullable<StackSettings["apiKeys"]>) {
    const stage = this.api.deploymentStage;
    const clientsPlan = this.api.addUsagePlan("ClientsPlan", {
      description: "server-to-server API keys",
      throttle: { rateLimit: 10, burstLimit: 20 },
      quota: { limit: 100_000, period: Period.DAY },
      apiStages: [{ api: this.api, stage }],
    });
    for (const { client, trusted } of clients) {
      const key = new ApiKey(this, `ApiKey-${client}`, { apiKeyName: `${this.stackName}-${client}` });
      Tags.of(key).add("client", client);
      Tags.of(key).add("trusted", String(trusted));
      clientsPlan.addApiKey(key);
    }
    const usersKeyValue = new Secret(this, "UsersApiKey", {
      description:
        "The API key the authorizer meters JWT users under (API Gateway needs one per request once keys are on)",
      generateSecretString: { passwordLength: 40, excludePunctuation: true },
    });
    const usersKey = new ApiKey(this, "UsersKey", {
      apiKeyName: `${this.stackName}-users`,
      value: usersKeyValue.secretValue.unsafeUnwrap(),
    });
    this.api
      .addUsagePlan("UsersPlan", {
        description: "JWT users, all under one key: throttled as the stage is",
        throttle: { rateLimit: 50, burstLimit: 100 },
        apiStages: [{ api: this.api, stage }],
      })
      .addApiKey(usersKey);
    this.authorizerFunction.addEnvironment("USERS_API_KEY_SECRET_ARN", usersKeyValue.secretArn);
    usersKeyValue.grantRead(this.authorizerFunction);
    // GetApiKeys (with values): the authorizer maps a key to its client and trust.
    this.authorizerFunction.addToRolePolicy(
      new PolicyStatement({
        actions: ["apigateway:GET"],
        resources: [`arn:${this.partition}:apigateway:${this.region}::/apikeys`],
      }),
    );
  }

  /**
   * A consumer's queue: its dead-letter queue after 3 receives, an alarm on anything landing
   * there, and a visibility timeout of 6x the consumer's timeout (AWS's advice for Lambda), so
   * a slow batch is not handed to a second invocation while the first still runs.
   */
  private queueWithDeadLetters(id: string, consumerTimeout: Duration, alarmDescription: string) {
    const deadLetters = new Queue(this, `${id}DLQ`, {
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    const queue = new Queue(this, `${id}Queue`, {
      visibilityTimeout: Duration.seconds(consumerTimeout.toSeconds() * 6),
      retentionPeriod: Duration.days(4),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: { queue: deadLetters, maxReceiveCount: MAX_RECEIVES },
    });
    new Alarm(this, `${id}DLQDepth`, {
      alarmDescription,
      metric: deadLetters.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1) }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    return { queue, deadLetters };
  }

  /** Every handler: Node 22 on Graviton, bundled by infra/aws/bundle (the SDK is the runtime's). */
  private fn(id: string, entry: string, props: FunctionOptions): LambdaFunction {
    const fn = new LambdaFunction(this, id, {
      code: functionCode(join(FUNCTIONS, entry), { langsmith: this.langsmith }),
      handler: "index.handler",
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      tracing: this.tracing ? Tracing.ACTIVE : Tracing.DISABLED,
      logGroup: new LogGroup(this, `${id}Logs`, {
        retention: RetentionDays.ONE_MONTH,
        removalPolicy: RemovalPolicy.DESTROY,
      }),
      ...props,
      // Stack traces point into the sources (the bundle ships its source map).
      environment: { NODE_OPTIONS: "--enable-source-maps", ...props.environment },
    });
    // On-call signals for every function: any error, any throttle.
    for (const [name, metric] of [
      ["Errors", fn.metricErrors({ period: Duration.minutes(5) })],
      ["Throttles", fn.metricThrottles({ period: Duration.minutes(5) })],
    ] as const) {
      new Alarm(this, `${id}${name}`, {
        alarmDescription: `${id}: ${name.toLowerCase()} in the last 5 minutes`,
        metric,
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
    }
    return fn;
  }
}

/** A model id may be a foundation model or a cross-region inference profile (us.anthropic...). */
function bedrockModelArns(stack: Stack, modelId: string): string[] {
  const base = modelId.replace(/^(us|eu|apac|global)\./, "");
  return [
    `arn:${stack.partition}:bedrock:*::foundation-model/${base}`,
    `arn:${stack.partition}:bedrock:${stack.region}:${stack.account}:inference-profile/${modelId}`,
  ];
}
