import { CfnOutput, Duration, RemovalPolicy, Stack, Tags, type CfnElement, type StackProps } from "aws-cdk-lib";
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
import { BedrockAccess } from "./bedrock-access";
import { Monitoring } from "./monitoring";
import {
  DEFAULT_QUEUE_CONCURRENCY,
  memoryThresholds,
  missingSettings,
  readSettings,
  SettingsError,
  type StackSettings,
} from "./settings";

const FUNCTIONS = join(import.meta.dirname, "../../functions");
const API_STAGE = "v1";
/** The streaming function's timeout, and its integration's: API Gateway streams for up to 15 minutes. */
const STREAM_TIMEOUT = Duration.seconds(120);

/** The stack's name: a `stage` context value suffixes it, and with it every resource name derived from it. */
export function stackName(stage: string | undefined): string {
  return stage ? `AgentBackend-${stage}` : "AgentBackend";
}

/** The agent backend. Grows resource by resource with the functions that use them. */
export class AgentStack extends Stack {
  readonly settings: StackSettings;
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
  /** The Intercom agent's resources: absent unless Intercom is on (`intercomAdminId`). */
  readonly intercomWebhookFunction?: LambdaFunction;
  readonly supportWorkerFunction?: LambdaFunction;
  readonly supportQueue?: Queue;
  readonly supportDeadLetters?: Queue;
  readonly authorizerFunction: LambdaFunction;
  readonly monitoring: Monitoring;
  /** X-Ray tracing for the API and every function, switched by the `tracing` context value */
  private readonly tracing: boolean;
  /** LangSmith's client in the bundles, switched by the `langsmith` context value */
  private readonly langsmith: boolean;

  constructor(scope: Construct, id: string, props?: StackProps & { settings?: StackSettings }) {
    super(scope, id, props);
    const settings = props?.settings ?? readSettings(this);
    const missing = missingSettings(settings);
    if (missing.length > 0) throw new SettingsError(`settings missing: ${missing.join(", ")}`);
    this.settings = settings;
    this.tracing = settings.tracing ?? false;
    this.langsmith = settings.langsmith ?? false;
    const concurrency = settings.queueConcurrency ?? DEFAULT_QUEUE_CONCURRENCY;
    const bedrock = new BedrockAccess(this, {
      chat: settings.bedrockModelId,
      embedding: settings.bedrockEmbeddingModelId,
      naming: settings.bedrockNamingModelId,
      region: settings.bedrockRegion,
    });
    this.monitoring = new Monitoring(this, "Monitoring", { prefix: this.stackName, alarmEmail: settings.alarmEmail });

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

    const supabaseKey: ISecret | undefined = settings.supabaseSecretArn
      ? Secret.fromSecretCompleteArn(this, "SupabaseServiceRoleKey", settings.supabaseSecretArn)
      : undefined;
    const thresholds = memoryThresholds(settings);
    const environment: Record<string, string> = {
      CHECKPOINT_TABLE: this.checkpointTable.tableName,
      ...(settings.supabaseUrl ? { SUPABASE_URL: settings.supabaseUrl } : {}),
      ...(supabaseKey ? { SUPABASE_SERVICE_ROLE_KEY_SECRET_ARN: supabaseKey.secretArn } : {}),
      ...(settings.bedrockModelId ? { BEDROCK_MODEL_ID: settings.bedrockModelId } : {}),
      ...(settings.bedrockEmbeddingModelId ? { BEDROCK_EMBEDDING_MODEL_ID: settings.bedrockEmbeddingModelId } : {}),
      ...(settings.bedrockNamingModelId ? { BEDROCK_NAMING_MODEL_ID: settings.bedrockNamingModelId } : {}),
      ...(settings.bedrockRegion ? { BEDROCK_REGION: settings.bedrockRegion } : {}),
      ...(settings.checkpointTtlDays ? { CHECKPOINT_TTL_DAYS: String(settings.checkpointTtlDays) } : {}),
      ...(settings.embeddingDimension ? { EMBEDDING_DIM: String(settings.embeddingDimension) } : {}),
      ...(settings.maxMessageBytes ? { MAX_MESSAGE_BYTES: String(settings.maxMessageBytes) } : {}),
      ...(thresholds.memoryMinScore !== undefined ? { MEMORY_MIN_SCORE: String(thresholds.memoryMinScore) } : {}),
      ...(thresholds.memoryDuplicateThreshold !== undefined
        ? { MEMORY_DUPLICATE_THRESHOLD: String(thresholds.memoryDuplicateThreshold) }
        : {}),
    };
    const readsSupabase = (fn: LambdaFunction) => supabaseKey?.grantRead(fn);

    // Memory extraction: a queue between the chat reply and the extraction function.
    const extractionTimeout = Duration.seconds(60);
    ({ queue: this.extractionQueue, deadLetters: this.extractionDeadLetters } = this.queueWithDeadLetters(
      "MemoryExtraction",
      extractionTimeout,
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
    // The same turn as server-sent events; a longer timeout since a client may read slowly,
    // and the streaming integration waits as long (below).
    this.chatStreamFunction = this.fn("ChatStreamFunction", "chat-stream.ts", {
      environment: { ...environment, EXTRACTION_QUEUE_URL: this.extractionQueue.queueUrl },
      timeout: STREAM_TIMEOUT,
      memorySize: 1024,
    });
    for (const fn of [this.chatFunction, this.chatStreamFunction]) {
      this.extractionQueue.grantSendMessages(fn);
      this.checkpointTable.grantReadWriteData(fn);
      readsSupabase(fn);
      bedrock.grantChat(fn, { streaming: true });
    }

    this.extractionFunction = this.fn("MemoryExtractionFunction", "memory-extraction.ts", {
      environment: { ...environment, IDEMPOTENCY_TABLE: this.idempotencyTable.tableName },
      timeout: extractionTimeout,
      memorySize: 1024,
    });
    this.idempotencyTable.grantReadWriteData(this.extractionFunction);
    readsSupabase(this.extractionFunction);
    bedrock.grantChat(this.extractionFunction);
    this.consume(this.extractionFunction, this.extractionQueue, {
      batchSize: 10,
      maxBatchingWindow: Duration.seconds(2),
      concurrency,
    });

    this.sessionsFunction = this.fn("SessionsFunction", "sessions.ts", {
      environment,
      timeout: Duration.seconds(10),
      memorySize: 512,
    });
    readsSupabase(this.sessionsFunction);
    // Ownership checks, and deleteThread when a session is deleted.
    this.checkpointTable.grantReadWriteData(this.sessionsFunction);

    this.memoriesFunction = this.fn("MemoriesFunction", "memories.ts", {
      environment,
      timeout: Duration.seconds(10),
      memorySize: 512,
    });
    readsSupabase(this.memoriesFunction);

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
    readsSupabase(this.ingestFunction);
    bedrock.grantEmbeddings(this.ingestFunction);
    this.consume(this.ingestFunction, this.ingestQueue, { batchSize: 5, concurrency });

    const accessLogs = new LogGroup(this, "ApiAccessLogs", {
      retention: RetentionDays.THREE_MONTHS,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // A demo without an OIDC issuer is reached with a generated API key (trusted, so a caller
    // may name its users and show their isolation).
    const apiKeys = [
      ...(settings.apiKeys ?? []),
      ...(settings.demo && !settings.oidcIssuer ? [{ client: "demo", trusted: true }] : []),
    ];
    this.api = new RestApi(this, "Api", {
      restApiName: `${this.stackName}-api`,
      description: "Agent backend API",
      // With API keys on, the authorizer names the key of each request (a client's own, or the
      // users' key for JWT callers), and API Gateway meters it against that key's usage plan.
      ...(apiKeys.length > 0 ? { apiKeySourceType: ApiKeySourceType.AUTHORIZER } : {}),
      deployOptions: {
        stageName: API_STAGE,
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
    this.monitoring.api(this.api, API_STAGE);
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
    const demoKey = apiKeys.length > 0 ? this.addApiKeys(apiKeys).get("demo") : undefined;
    const api = this.api.root.addResource("api", { defaultMethodOptions: secured });
    // Chat bodies are checked at the gateway against the handlers' own schema, so a malformed
    // request never reaches (or wakes) a function; the handlers still check everything. The
    // message cap is the one the handlers get (MAX_MESSAGE_BYTES), from one context value.
    const maxMessageBytes = loadConfig(environment).MAX_MESSAGE_BYTES;
    const chatBody: MethodOptions = {
      requestValidator: new RequestValidator(this, "RequestValidator", {
        restApi: this.api,
        validateRequestBody: true,
        validateRequestParameters: true,
      }),
      requestModels: {
        "application/json": this.api.addModel("ChatRequest", {
          contentType: "application/json",
          schema: apiModelSchema(chatRequest(maxMessageBytes)),
        }),
      },
    };
    const chat = api.addResource("chat");
    chat.addMethod("POST", new LambdaIntegration(this.chatFunction), chatBody);
    chat.addResource("stream").addMethod(
      "POST",
      new LambdaIntegration(this.chatStreamFunction, {
        responseTransferMode: ResponseTransferMode.STREAM,
        // A streamed answer may take as long as its function: API Gateway's 29 s default would cut it off.
        timeout: STREAM_TIMEOUT,
      }),
      chatBody,
    );
    const sessionsIntegration = new LambdaIntegration(this.sessionsFunction);
    const sessions = api.addResource("sessions");
    sessions.addMethod("GET", sessionsIntegration);
    const session = sessions.addResource("{id}");
    session.addMethod("DELETE", sessionsIntegration);
    session.addResource("messages").addMethod("GET", sessionsIntegration);
    const memories = api.addResource("memories");
    const memoriesIntegration = new LambdaIntegration(this.memoriesFunction);
    memories.addMethod("GET", memoriesIntegration);
    memories.addResource("{id}").addMethod("DELETE", memoriesIntegration);

    if (settings.intercom) {
      const intercom = this.addIntercom(environment, bedrock, concurrency, readsSupabase, settings.intercomAdminId!);
      ({
        webhookFunction: this.intercomWebhookFunction,
        workerFunction: this.supportWorkerFunction,
        queue: this.supportQueue,
        deadLetters: this.supportDeadLetters,
      } = intercom);
      new CfnOutput(this, "IntercomWebhookUrl", {
        description: "Give this URL to your Intercom app's webhook (topics conversation.user.created and .replied)",
        value: this.api.urlForPath("/webhooks/intercom"),
      });
      new CfnOutput(this, "IntercomAccessTokenSecretName", {
        description: "Put your Intercom access token in this secret (aws secretsmanager put-secret-value)",
        value: intercom.token.secretName,
      });
      new CfnOutput(this, "IntercomClientSecretName", {
        description: "Put your Intercom app's client secret (it signs webhooks) in this secret",
        value: intercom.clientSecret.secretName,
      });
    }

    this.monitoring.agentMetrics(["chat", "chat-stream", "memory-extraction", "ingest", "support-worker"]);
    new CfnOutput(this, "DocumentsBucketName", {
      description: "Drop knowledge-base documents here, under DocumentsPrefix",
      value: this.documentsBucket.bucketName,
    });
    new CfnOutput(this, "DocumentsPrefix", {
      description: "Key prefix that is ingested",
      value: settings.documentsPrefix,
    });
    if (supabaseKey)
      new CfnOutput(this, "SupabaseSecretName", {
        description: "The secret holding the Supabase service-role key",
        value: supabaseKey.secretName,
      });
    new CfnOutput(this, "AlarmTopicArn", {
      description: "Every alarm notifies this SNS topic; subscribe on-call to it (or deploy with -c alarmEmail=…)",
      value: this.monitoring.topic.topicArn,
    });
    new CfnOutput(this, "DashboardUrl", {
      description: "The CloudWatch dashboard: replies, latency, tool calls, errors, queues, dead letters",
      value: `https://console.aws.amazon.com/cloudwatch/home?region=${this.region}#dashboards:name=${this.stackName}`,
    });
    if (settings.demo) {
      new CfnOutput(this, "Demo", {
        description: "This deployment answers with the offline stand-ins, on purpose (-c demo=true)",
        value: settings.bedrockModelId
          ? "demo: Bedrock model configured, other stand-ins may be in use"
          : "demo: the offline rule-based model and the hashing embedder answer; not for customers",
      });
      if (demoKey)
        new CfnOutput(this, "DemoApiKeyId", {
          description:
            "Read the demo key with: aws apigateway get-api-key --include-value --api-key <this id>; send it as Authorization: ApiKey <value>",
          value: demoKey.keyId,
        });
    }
    acknowledgeNagFindings(this, {
      documentsBucketArn: `${this.getLogicalId(this.documentsBucket.node.defaultChild as CfnElement)}.Arn`,
      documentsPrefix: settings.documentsPrefix,
      tracing: this.tracing,
    });
  }

  /** The Intercom agent: the webhook verifies and queues; the worker runs the support graph. */
  private addIntercom(
    environment: Record<string, string>,
    bedrock: BedrockAccess,
    concurrency: number,
    readsSupabase: (fn: LambdaFunction) => void,
    adminId: string,
  ) {
    const token = new Secret(this, "IntercomAccessToken", {
      description: "Intercom access token for the support agent: replace the generated value",
    });
    const clientSecret = new Secret(this, "IntercomClientSecret", {
      description: "Intercom app client secret, which signs webhooks: replace the generated value",
    });
    const supportTimeout = Duration.seconds(120);
    const { queue, deadLetters } = this.queueWithDeadLetters("Support", supportTimeout);
    const webhookFunction = this.fn("IntercomWebhookFunction", "intercom-webhook.ts", {
      environment: {
        ...environment,
        IDEMPOTENCY_TABLE: this.idempotencyTable.tableName,
        SUPPORT_QUEUE_URL: queue.queueUrl,
        INTERCOM_CLIENT_SECRET_ARN: clientSecret.secretArn,
      },
      timeout: Duration.seconds(10),
      memorySize: 512,
    });
    clientSecret.grantRead(webhookFunction);
    queue.grantSendMessages(webhookFunction);
    this.idempotencyTable.grantReadWriteData(webhookFunction);

    const workerFunction = this.fn("SupportWorkerFunction", "support-worker.ts", {
      environment: {
        ...environment,
        IDEMPOTENCY_TABLE: this.idempotencyTable.tableName,
        INTERCOM_ACCESS_TOKEN_SECRET_ARN: token.secretArn,
        INTERCOM_ADMIN_ID: adminId,
      },
      timeout: supportTimeout,
      memorySize: 1024,
    });
    token.grantRead(workerFunction);
    bedrock.grantChat(workerFunction);
    readsSupabase(workerFunction);
    this.checkpointTable.grantReadWriteData(workerFunction);
    this.idempotencyTable.grantReadWriteData(workerFunction);
    this.consume(workerFunction, queue, { batchSize: 5, concurrency });

    const webhook = this.api.root.addResource("webhooks").addResource("intercom");
    const webhookIntegration = new LambdaIntegration(webhookFunction);
    webhook.addMethod("POST", webhookIntegration);
    webhook.addMethod("HEAD", webhookIntegration);
    return { webhookFunction, workerFunction, queue, deadLetters, token, clientSecret };
  }

  /**
   * A queue consumer: batches with per-record failures reported back, and at most `concurrency`
   * invocations at once, so a burst cannot exhaust Bedrock quotas or Supabase connections.
   */
  private consume(
    fn: LambdaFunction,
    queue: Queue,
    {
      batchSize,
      maxBatchingWindow,
      concurrency,
    }: { batchSize: number; maxBatchingWindow?: Duration; concurrency: number },
  ) {
    fn.addEventSource(
      new SqsEventSource(queue, {
        batchSize,
        ...(maxBatchingWindow ? { maxBatchingWindow } : {}),
        reportBatchItemFailures: true,
        maxConcurrency: concurrency,
      }),
    );
  }

  /**
   * Server-to-server API keys (`apiKeys` context): one key per client, tagged with its name and
   * whether it is trusted to name users, under a clients' usage plan (10 requests/s, burst 20,
   * 100,000 a day per key). JWT users are metered under one users' key, whose value the stack
   * generates into a secret for the authorizer; its plan only throttles, as the stage does.
   */
  private addApiKeys(clients: NonNullable<StackSettings["apiKeys"]>): Map<string, ApiKey> {
    const keys = new Map<string, ApiKey>();
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
      keys.set(client, key);
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
    return keys;
  }

  /**
   * A consumer's queue: its dead-letter queue after MAX_RECEIVES receives (alarmed on anything
   * landing there), and a visibility timeout of 6x the consumer's timeout (AWS's advice for
   * Lambda), so a slow batch is not handed to a second invocation while the first still runs.
   */
  private queueWithDeadLetters(id: string, consumerTimeout: Duration) {
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
    // Older than one full retry cycle: the consumer is not keeping up.
    this.monitoring.queue(queue, deadLetters, id, Duration.seconds(consumerTimeout.toSeconds() * 6 * MAX_RECEIVES));
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
    this.monitoring.function(fn, id.replace(/Function$/, ""));
    return fn;
  }
}
