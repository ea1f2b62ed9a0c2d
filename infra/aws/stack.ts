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
  Cors,
  RequestAuthorizer,
  TokenAuthorizer,
  type MethodOptions,
} from "aws-cdk-lib/aws-apigateway";
import { AttributeType, Billing, ProjectionType, TableV2 } from "aws-cdk-lib/aws-dynamodb";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import { Architecture, Function as LambdaFunction, Runtime, Tracing } from "aws-cdk-lib/aws-lambda";
import { functionCode } from "./bundle/code";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { Secret, type ISecret } from "aws-cdk-lib/aws-secretsmanager";
import { SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import { Rule, Schedule } from "aws-cdk-lib/aws-events";
import { LambdaFunction as LambdaTarget } from "aws-cdk-lib/aws-events-targets";
import type { Queue } from "aws-cdk-lib/aws-sqs";
import { IDEMPOTENCY_TABLE } from "../../shared/idempotency";
import { BlockPublicAccess, Bucket, BucketEncryption, EventType, HttpMethods } from "aws-cdk-lib/aws-s3";
import { SqsDestination } from "aws-cdk-lib/aws-s3-notifications";
import type { Construct } from "constructs";
import { join } from "node:path";
import { CHECKPOINT_TABLE } from "../../shared/stores/checkpoint-table";
import { USAGE_ITEM_PREFIX } from "../../shared/stores/user-usage";
import { acknowledgeNagFindings, acknowledgePlaygroundFindings } from "./nag";
import { apiModelSchema } from "./api-models";
import { chatRequest } from "../../shared/chat-request";
import { loadConfig } from "../../shared/config";
import { Attachments } from "./attachments";
import { ATTACHMENT_ACCESS, DOCUMENT_ADMIN_ACTIONS } from "../grants";
import { CORS_ALLOW_HEADERS, CORS_ALLOW_METHODS } from "../../shared/cors";
import { BedrockAccess } from "./bedrock-access";
import { Monitoring } from "./monitoring";
import { CronSchedules } from "./crons";
import { queueWithDeadLetters } from "./queues";
import { constructId, deployedFunctions, type FunctionSpec, type Grant, type QueueName } from "../manifest";
import { Playground, playgroundConnectSources } from "./playground";
import {
  checkPlayground,
  DEFAULT_QUEUE_CONCURRENCY,
  memoryThresholds,
  missingSettings,
  readSettings,
  SettingsError,
  type StackSettings,
} from "./settings";

const FUNCTIONS = join(import.meta.dirname, "../../functions");
const API_STAGE = "v1";

/** The stack's name: a `stage` context value suffixes it, and with it every resource name derived from it. */
export function stackName(stage: string | undefined): string {
  return stage ? `AgentBackend-${stage}` : "AgentBackend";
}

/** The agent backend. Grows resource by resource with the functions that use them. */
export class AgentStack extends Stack {
  readonly settings: StackSettings;
  readonly checkpointTable: TableV2;
  readonly api: RestApi;
  /** Every deployed function by its manifest name. */
  readonly functions: ReadonlyMap<string, LambdaFunction>;
  readonly chatFunction: LambdaFunction;
  readonly chatStreamFunction: LambdaFunction;
  readonly sessionsFunction: LambdaFunction;
  readonly memoriesFunction: LambdaFunction;
  readonly extractionFunction: LambdaFunction;
  readonly extractionQueue: Queue;
  readonly extractionDeadLetters: Queue;
  readonly idempotencyTable: TableV2;
  readonly documentsBucket: Bucket;
  readonly attachments: Attachments;
  readonly ingestQueue: Queue;
  readonly ingestDeadLetters: Queue;
  readonly ingestFunction: LambdaFunction;
  /** The Intercom agent's resources: absent unless Intercom is on (`intercomAdminId`). */
  readonly intercomWebhookFunction?: LambdaFunction;
  readonly supportWorkerFunction?: LambdaFunction;
  readonly supportQueue?: Queue;
  /** the run worker's queue: background runs of the Agent Server API */
  readonly runsQueue: Queue;
  readonly runsDeadLetters: Queue;
  /** the webhook sender's queue: completion webhooks of runs */
  readonly webhooksQueue: Queue;
  readonly webhooksDeadLetters: Queue;
  readonly supportDeadLetters?: Queue;
  readonly authorizerFunction: LambdaFunction;
  readonly monitoring: Monitoring;
  /** The web playground on CloudFront: absent unless `playground=true`. */
  readonly playground?: Playground;
  /** the generated key a demo without an OIDC issuer is reached with */
  private demoKey?: ApiKey;
  /** X-Ray tracing for the API and every function, switched by the `tracing` context value */
  private readonly tracing: boolean;
  /** LangSmith's client in the bundles, switched by the `langsmith` context value */
  private readonly langsmith: boolean;

  constructor(scope: Construct, id: string, props?: StackProps & { settings?: StackSettings }) {
    super(scope, id, props);
    const settings = props?.settings ?? readSettings(this);
    const missing = missingSettings(settings);
    if (missing.length > 0) throw new SettingsError(`settings missing: ${missing.join(", ")}`);
    checkPlayground(settings);
    this.settings = settings;
    this.tracing = settings.tracing ?? false;
    this.langsmith = settings.langsmith ?? false;
    this.monitoring = new Monitoring(this, "Monitoring", { prefix: this.stackName, alarmEmail: settings.alarmEmail });
    const bedrock = new BedrockAccess(this, {
      chat: settings.bedrockModelId,
      embedding: settings.bedrockEmbeddingModelId,
      naming: settings.bedrockNamingModelId,
      region: settings.bedrockRegion,
    });
    const specs = deployedFunctions({ intercom: settings.intercom ?? false });

    // Graph state: one item per checkpoint, write and stored message (graph/checkpoint).
    // On-demand billing because chat traffic is spiky; PITR because a thread's state
    // is user data; TTL so abandoned threads age out.
    this.checkpointTable = new TableV2(this, "CheckpointTable", {
      partitionKey: { name: CHECKPOINT_TABLE.partitionKey, type: AttributeType.STRING },
      sortKey: { name: CHECKPOINT_TABLE.sortKey, type: AttributeType.STRING },
      billing: Billing.onDemand(),
      timeToLiveAttribute: CHECKPOINT_TABLE.ttlAttribute,
      // Export and erasure find a user's sessions here (shared/stores/session-owners.ts).
      globalSecondaryIndexes: [
        {
          indexName: CHECKPOINT_TABLE.userIndex.name,
          partitionKey: { name: CHECKPOINT_TABLE.userIndex.partitionKey, type: AttributeType.STRING },
          sortKey: { name: CHECKPOINT_TABLE.userIndex.sortKey, type: AttributeType.STRING },
          projectionType: ProjectionType.KEYS_ONLY,
        },
      ],
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // Powertools idempotency records for queue consumers: a redelivered message is processed once.
    this.idempotencyTable = new TableV2(this, "IdempotencyTable", {
      partitionKey: { name: IDEMPOTENCY_TABLE.partitionKey, type: AttributeType.STRING },
      billing: Billing.onDemand(),
      timeToLiveAttribute: IDEMPOTENCY_TABLE.ttlAttribute,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const supabaseKey: ISecret | undefined = settings.supabaseSecretArn
      ? Secret.fromSecretCompleteArn(this, "SupabaseServiceRoleKey", settings.supabaseSecretArn)
      : undefined;

    // A queue for each deployed consumer, with the construct ids it had before the manifest.
    const queueIds: Record<QueueName, string> = {
      extraction: "MemoryExtraction",
      ingest: "Ingest",
      support: "Support",
      runs: "Runs",
      webhooks: "Webhooks",
    };
    const queues = new Map<QueueName, { queue: Queue; deadLetters: Queue }>();
    for (const spec of specs)
      if (spec.source)
        queues.set(
          spec.source.queue,
          queueWithDeadLetters(this, queueIds[spec.source.queue], spec.source.queue, this.monitoring),
        );

    const cronSchedules = new CronSchedules(this, "Crons", {
      queue: queues.get("runs")!.queue,
      monitoring: this.monitoring,
    });

    // The playground's origin is the API's first browser origin, besides any the context allows.
    this.playground = settings.playground
      ? new Playground(this, "Playground", {
          connect: playgroundConnectSources(settings.oidcIssuer!, settings.playgroundConnectSources),
        })
      : undefined;
    const browserOrigins = [...(settings.corsOrigins ?? []), ...(this.playground ? [this.playground.origin] : [])];

    // Knowledge base: documents dropped under the prefix are ingested through a queue.
    this.documentsBucket = new Bucket(this, "DocumentsBucket", {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      versioned: true,
      removalPolicy: RemovalPolicy.RETAIN,
      // The playground's Knowledge panel uploads documents straight to the bucket (presigned PUT).
      ...(this.playground
        ? {
            cors: [
              { allowedMethods: [HttpMethods.PUT], allowedOrigins: [this.playground.origin], allowedHeaders: ["*"] },
            ],
          }
        : {}),
    });
    const notify = new SqsDestination(queues.get("ingest")!.queue);
    // Every key under the prefix, not a suffix per extension: S3 matches a suffix to the letter, so
    // Guide.PDF would never be announced, while ingestion reads extensions in any case (and skips,
    // with its reason, a type it does not read).
    for (const event of [EventType.OBJECT_CREATED, EventType.OBJECT_REMOVED]) {
      this.documentsBucket.addEventNotification(event, notify, { prefix: settings.documentsPrefix });
    }

    // Files of chat sessions (images, data files), uploaded through presigned URLs.
    this.attachments = new Attachments(this, "Attachments", { expireAfterDays: settings.attachmentsExpireDays ?? 30 });

    const intercom = settings.intercom
      ? {
          token: new Secret(this, "IntercomAccessToken", {
            description: "Intercom access token for the support agent: replace the generated value",
          }),
          clientSecret: new Secret(this, "IntercomClientSecret", {
            description: "Intercom app client secret, which signs webhooks: replace the generated value",
          }),
        }
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
      ...(browserOrigins.length > 0 ? { CORS_ORIGINS: browserOrigins.join(",") } : {}),
      ...(settings.projectSettings ? { PROJECT_SETTINGS: settings.projectSettings } : {}),
      ...(settings.userQuotas ? { USER_QUOTAS: settings.userQuotas } : {}),
      ...(settings.sessionRetentionDays ? { SESSION_RETENTION_DAYS: String(settings.sessionRetentionDays) } : {}),
      ...(settings.webhookHosts ? { WEBHOOK_HOSTS: settings.webhookHosts.join(",") } : {}),
      ...(thresholds.memoryMinScore !== undefined ? { MEMORY_MIN_SCORE: String(thresholds.memoryMinScore) } : {}),
      ...(thresholds.memoryDuplicateThreshold !== undefined
        ? { MEMORY_DUPLICATE_THRESHOLD: String(thresholds.memoryDuplicateThreshold) }
        : {}),
    };

    /** What each grant of the manifest means here: a permission, and the environment that goes with it. */
    const grant = (fn: LambdaFunction, name: Grant, spec: FunctionSpec) => {
      switch (name) {
        case "checkpoints":
          return this.checkpointTable.grantReadWriteData(fn);
        case "usage":
          // UpdateItem on the usage items only: IAM holds the partition keys to their prefix.
          return fn.addToRolePolicy(
            new PolicyStatement({
              actions: ["dynamodb:UpdateItem"],
              resources: [this.checkpointTable.tableArn],
              conditions: { "ForAllValues:StringLike": { "dynamodb:LeadingKeys": [`${USAGE_ITEM_PREFIX}*`] } },
            }),
          );
        case "idempotency":
          fn.addEnvironment("IDEMPOTENCY_TABLE", this.idempotencyTable.tableName);
          return this.idempotencyTable.grantReadWriteData(fn);
        case "supabase":
          return supabaseKey?.grantRead(fn);
        case "bedrock-chat":
          // API functions may stream from the model; queue consumers only invoke.
          return bedrock.grantChat(fn, { streaming: spec.kind === "api" });
        case "bedrock-embeddings":
          return bedrock.grantEmbeddings(fn);
        case "send:extraction":
          fn.addEnvironment("EXTRACTION_QUEUE_URL", queues.get("extraction")!.queue.queueUrl);
          return queues.get("extraction")!.queue.grantSendMessages(fn);
        case "send:support":
          fn.addEnvironment("SUPPORT_QUEUE_URL", queues.get("support")!.queue.queueUrl);
          return queues.get("support")!.queue.grantSendMessages(fn);
        case "send:webhooks":
          fn.addEnvironment("WEBHOOKS_QUEUE_URL", queues.get("webhooks")!.queue.queueUrl);
          return queues.get("webhooks")!.queue.grantSendMessages(fn);
        case "send:runs":
          fn.addEnvironment("RUNS_QUEUE_URL", queues.get("runs")!.queue.queueUrl);
          return queues.get("runs")!.queue.grantSendMessages(fn);
        case "attachments":
        case "attachments:chat":
        case "attachments:delete":
        case "attachments:read":
        case "attachments:erase":
          return this.attachments.grant(fn, ATTACHMENT_ACCESS[name]!);
        case "invoke:data": {
          const data = functions.get("data")!;
          fn.addEnvironment("DATA_FUNCTION_NAME", data.functionName);
          // The unqualified function only (grantInvoke adds every version and alias, `:*`).
          return fn.addToRolePolicy(
            new PolicyStatement({ actions: ["lambda:InvokeFunction"], resources: [data.functionArn] }),
          );
        }
        case "documents":
          return this.documentsBucket.grantRead(fn, `${settings.documentsPrefix}*`);
        case "documents:admin":
          fn.addEnvironment("DOCUMENTS_BUCKET", this.documentsBucket.bucketName);
          fn.addEnvironment("DOCUMENTS_PREFIX", settings.documentsPrefix);
          // Exactly what presigning an upload and deleting a document need (CDK's grantPut and
          // grantDelete add s3:Abort* and s3:DeleteObject* wildcards).
          return fn.addToRolePolicy(
            new PolicyStatement({
              actions: DOCUMENT_ADMIN_ACTIONS,
              resources: [this.documentsBucket.arnForObjects(`${settings.documentsPrefix}*`)],
            }),
          );
        case "intercom-token":
          fn.addEnvironment("INTERCOM_ACCESS_TOKEN_SECRET_ARN", intercom!.token.secretArn);
          fn.addEnvironment("INTERCOM_ADMIN_ID", settings.intercomAdminId!);
          return intercom!.token.grantRead(fn);
        case "crons":
          return cronSchedules.grantManage(fn, queues.get("runs")!.queue);
        case "crons:remove":
          return cronSchedules.grantRemove(fn, queues.get("runs")!.queue);
        case "intercom-client-secret":
          fn.addEnvironment("INTERCOM_CLIENT_SECRET_ARN", intercom!.clientSecret.secretArn);
          return intercom!.clientSecret.grantRead(fn);
        default: {
          // A grant added to the manifest's type without a meaning here fails to compile.
          const unknown: never = name;
          throw new Error(`grant ${String(unknown)} has no meaning in the stack`);
        }
      }
    };

    const functions = new Map<string, LambdaFunction>();
    // The data function first: the functions granted to invoke it are given its name.
    const engineFirst = [...specs].sort((a, b) => Number(b.kind === "engine") - Number(a.kind === "engine"));
    for (const spec of engineFirst) {
      const fn = this.lambda(
        spec,
        spec.kind === "engine"
          ? {} // the data function: the bucket its grant names, and nothing of the rest
          : spec.kind === "authorizer"
            ? {
                ...(settings.oidcIssuer ? { OIDC_ISSUER: settings.oidcIssuer } : {}),
                ...(settings.oidcAudience ? { OIDC_AUDIENCE: settings.oidcAudience } : {}),
                ...(settings.adminGroup ? { ADMIN_GROUP: settings.adminGroup, ADMIN_CLAIM: settings.adminClaim! } : {}),
              }
            : environment,
      );
      for (const name of spec.grants) grant(fn, name, spec);
      if (spec.kind === "upload") this.attachments.notify(fn);
      if (spec.kind === "schedule")
        new Rule(this, `${constructId(spec.name)}Schedule`, {
          schedule: Schedule.rate(Duration.minutes(spec.everyMinutes ?? 60)),
          targets: [new LambdaTarget(fn, { retryAttempts: 0 })],
        });
      if (spec.source)
        fn.addEventSource(
          new SqsEventSource(queues.get(spec.source.queue)!.queue, {
            batchSize: spec.source.batchSize,
            ...(spec.source.maxBatchingWindowSeconds
              ? { maxBatchingWindow: Duration.seconds(spec.source.maxBatchingWindowSeconds) }
              : {}),
            reportBatchItemFailures: true,
            // At most this many invocations at once, so a burst cannot exhaust Bedrock quotas or
            // Supabase connections.
            maxConcurrency: settings.queueConcurrency ?? DEFAULT_QUEUE_CONCURRENCY,
          }),
        );
      functions.set(spec.name, fn);
    }

    this.functions = functions;
    this.api = this.restApi(settings, browserOrigins, specs, functions);
    this.playground?.publish({
      mode: "oidc",
      apiUrl: this.api.url,
      issuer: settings.oidcIssuer!,
      clientId: settings.playgroundClientId ?? settings.oidcAudience!,
      audience: settings.oidcAudience!,
      scope: settings.playgroundScopes ?? "openid email",
    });

    this.chatFunction = functions.get("chat")!;
    this.chatStreamFunction = functions.get("chat-stream")!;
    this.sessionsFunction = functions.get("sessions")!;
    this.memoriesFunction = functions.get("memories")!;
    this.extractionFunction = functions.get("memory-extraction")!;
    this.ingestFunction = functions.get("ingest")!;
    this.authorizerFunction = functions.get("authorizer")!;
    this.intercomWebhookFunction = functions.get("intercom-webhook");
    this.supportWorkerFunction = functions.get("support-worker");
    ({ queue: this.extractionQueue, deadLetters: this.extractionDeadLetters } = queues.get("extraction")!);
    ({ queue: this.ingestQueue, deadLetters: this.ingestDeadLetters } = queues.get("ingest")!);
    this.supportQueue = queues.get("support")?.queue;
    ({ queue: this.runsQueue, deadLetters: this.runsDeadLetters } = queues.get("runs")!);
    ({ queue: this.webhooksQueue, deadLetters: this.webhooksDeadLetters } = queues.get("webhooks")!);
    this.supportDeadLetters = queues.get("support")?.deadLetters;

    this.monitoring.agentMetrics(["chat", "chat-stream", "memory-extraction", "ingest", "support-worker"]);
    this.outputs(settings, supabaseKey, intercom);
    if (this.playground) acknowledgePlaygroundFindings(this.playground);
    acknowledgeNagFindings(this, {
      documentsBucket: this.documentsBucket,
      documentsBucketArn: `${this.getLogicalId(this.documentsBucket.node.defaultChild as CfnElement)}.Arn`,
      documentsPrefix: settings.documentsPrefix,
      tracing: this.tracing,
      checkpointTableArn: `${this.getLogicalId(this.checkpointTable.node.defaultChild as CfnElement)}.Arn`,
    });
  }

  /**
   * The REST API: every route of the manifest on its function, behind the JWT authorizer unless
   * the route is public, chat bodies checked at the gateway against the handlers' own schema.
   */
  private restApi(
    settings: StackSettings,
    browserOrigins: string[],
    specs: FunctionSpec[],
    functions: Map<string, LambdaFunction>,
  ): RestApi {
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
    const api = new RestApi(this, "Api", {
      restApiName: `${this.stackName}-api`,
      description: "Agent backend API",
      // With API keys on, the authorizer names the key of each request (a client's own, or the
      // users' key for JWT callers), and API Gateway meters it against that key's usage plan.
      ...(apiKeys.length > 0 ? { apiKeySourceType: ApiKeySourceType.AUTHORIZER } : {}),
      // Browser clients' preflights, only for the origins the `corsOrigins` context allows (none by
      // default) and the playground's; the functions add the CORS headers to their own responses
      // (shared/cors.ts).
      ...(browserOrigins.length > 0
        ? {
            defaultCorsPreflightOptions: {
              allowOrigins: browserOrigins.includes("*") ? Cors.ALL_ORIGINS : browserOrigins,
              allowMethods: CORS_ALLOW_METHODS,
              allowHeaders: CORS_ALLOW_HEADERS,
              maxAge: Duration.minutes(10),
            },
          }
        : {}),
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
    // The gateway's own refusals (bad body, no or expired token, throttled) in the handlers' error
    // shape, readable by the browser clients: a gateway response cannot pick among several allowed
    // origins, so it echoes the caller's. That opens only these error bodies to any origin, and the
    // API takes bearer tokens, never cookies, so no credentials ride on them.
    const gatewayOrigin = browserOrigins.includes("*")
      ? "'*'"
      : browserOrigins.length > 0
        ? "method.request.header.Origin"
        : undefined;
    for (const type of [ResponseType.DEFAULT_4XX, ResponseType.DEFAULT_5XX]) {
      api.addGatewayResponse(`${type.responseType}Response`, {
        type,
        ...(gatewayOrigin ? { responseHeaders: { "Access-Control-Allow-Origin": gatewayOrigin } } : {}),
        templates: {
          "application/json": '{"error":{"code":"$context.error.responseType","message":$context.error.messageString}}',
        },
      });
    }
    this.monitoring.api(api, API_STAGE);
    // Every /api route needs a bearer JWT from the configured OIDC issuer; its `sub` is the user.
    const authorizerFunction = functions.get("authorizer")!;
    const secured: MethodOptions = {
      authorizer: new TokenAuthorizer(this, "JwtAuthorizer", {
        handler: authorizerFunction,
        resultsCacheTtl: Duration.minutes(5),
      }),
      apiKeyRequired: apiKeys.length > 0,
    };
    // The Agent Server API's routes also take the key in x-api-key (HttpRoute.apiKeyHeader).
    let withKeyHeader: MethodOptions | undefined;
    const keyHeaderOptions = () =>
      (withKeyHeader ??= {
        authorizer: new RequestAuthorizer(this, "KeyHeaderAuthorizer", {
          handler: authorizerFunction,
          identitySources: [],
          resultsCacheTtl: Duration.seconds(0),
        }),
        apiKeyRequired: apiKeys.length > 0,
      });
    this.demoKey = apiKeys.length > 0 ? this.addApiKeys(api, apiKeys, authorizerFunction).get("demo") : undefined;
    // Chat bodies are checked at the gateway against the handlers' own schema, so a malformed
    // request never reaches (or wakes) a function; the handlers still check everything. The
    // message cap is the one the handlers get (MAX_MESSAGE_BYTES), from one context value.
    const maxMessageBytes = loadConfig(
      settings.maxMessageBytes ? { MAX_MESSAGE_BYTES: String(settings.maxMessageBytes) } : {},
    ).MAX_MESSAGE_BYTES;
    let chatBody: MethodOptions | undefined;
    const chatBodyOptions = () =>
      (chatBody ??= {
        requestValidator: new RequestValidator(this, "RequestValidator", {
          restApi: api,
          validateRequestBody: true,
          validateRequestParameters: true,
        }),
        requestModels: {
          "application/json": api.addModel("ChatRequest", {
            contentType: "application/json",
            schema: apiModelSchema(chatRequest(maxMessageBytes)),
          }),
        },
      });
    for (const spec of specs) {
      for (const route of spec.routes ?? []) {
        const integration = new LambdaIntegration(functions.get(spec.name)!, {
          // One invoke permission per function for the whole API rather than two per method: 130
          // routes would otherwise make 260 AWS::Lambda::Permission resources and pass
          // CloudFormation's 500 resources a stack may hold. The API still routes each method to
          // its own function only.
          scopePermissionToMethod: false,
          ...(route.streaming
            ? {
                responseTransferMode: ResponseTransferMode.STREAM,
                // A streamed answer may take as long as its function: API Gateway's 29 s default would cut it off.
                timeout: Duration.seconds(spec.timeoutSeconds),
              }
            : {}),
        });
        api.root.resourceForPath(route.path).addMethod(route.method, integration, {
          ...(route.public ? {} : route.apiKeyHeader ? keyHeaderOptions() : secured),
          ...(route.chatBody ? chatBodyOptions() : {}),
        });
      }
    }
    return api;
  }

  private outputs(
    settings: StackSettings,
    supabaseKey: ISecret | undefined,
    intercom: { token: ISecret; clientSecret: ISecret } | undefined,
  ) {
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
    if (intercom) {
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
      if (this.demoKey)
        new CfnOutput(this, "DemoApiKeyId", {
          description:
            "Read the demo key with: aws apigateway get-api-key --include-value --api-key <this id>; send it as Authorization: ApiKey <value>",
          value: this.demoKey.keyId,
        });
    }
  }

  /**
   * Server-to-server API keys (`apiKeys` context): one key per client, tagged with its name and
   * whether it is trusted to name users, under a clients' usage plan (10 requests/s, burst 20,
   * 100,000 a day per key). JWT users are metered under one users' key, whose value the stack
   * generates into a secret for the authorizer; its plan only throttles, as the stage does.
   */
  private addApiKeys(
    api: RestApi,
    clients: NonNullable<StackSettings["apiKeys"]>,
    authorizerFunction: LambdaFunction,
  ): Map<string, ApiKey> {
    const keys = new Map<string, ApiKey>();
    const stage = api.deploymentStage;
    const clientsPlan = api.addUsagePlan("ClientsPlan", {
      description: "server-to-server API keys",
      throttle: { rateLimit: 10, burstLimit: 20 },
      quota: { limit: 100_000, period: Period.DAY },
      apiStages: [{ api, stage }],
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
    api
      .addUsagePlan("UsersPlan", {
        description: "JWT users, all under one key: throttled as the stage is",
        throttle: { rateLimit: 50, burstLimit: 100 },
        apiStages: [{ api, stage }],
      })
      .addApiKey(usersKey);
    authorizerFunction.addEnvironment("USERS_API_KEY_SECRET_ARN", usersKeyValue.secretArn);
    authorizerFunction.addEnvironment("API_KEY_STACK", this.stackName);
    usersKeyValue.grantRead(authorizerFunction);
    // GetApiKeys (with values): the authorizer maps a key to its client and trust.
    authorizerFunction.addToRolePolicy(
      new PolicyStatement({
        actions: ["apigateway:GET"],
        resources: [`arn:${this.partition}:apigateway:${this.region}::/apikeys`],
      }),
    );
    return keys;
  }

  /** Every function: Node 22, bundled by infra/aws/bundle (ES modules, the SDK inside). */
  private lambda(spec: FunctionSpec, environment: Record<string, string>): LambdaFunction {
    const id = constructId(spec.name);
    const fn = new LambdaFunction(this, id, {
      code: functionCode(join(FUNCTIONS, `${spec.name}.ts`), {
        langsmith: this.langsmith,
        ...(spec.native ? { native: spec.native } : {}),
      }),
      handler: "index.handler",
      runtime: Runtime.NODEJS_22_X,
      // Graviton, but for functions shipping DuckDB's x64 binding (infra/aws/bundle/native.ts).
      architecture: spec.native === "duckdb" ? Architecture.X86_64 : Architecture.ARM_64,
      tracing: this.tracing ? Tracing.ACTIVE : Tracing.DISABLED,
      timeout: Duration.seconds(spec.timeoutSeconds),
      memorySize: spec.memoryMB,
      logGroup: new LogGroup(this, `${id}Logs`, {
        retention: RetentionDays.ONE_MONTH,
        removalPolicy: RemovalPolicy.DESTROY,
      }),
      // A logged error's stack points into the sources (the bundle ships its source maps, and the
      // logger reads one when it logs an error, shared/source-maps.ts): no --enable-source-maps,
      // which parses the whole map at every cold start.
      environment: { ...environment },
    });
    // On-call signals for every function: any error, any throttle.
    this.monitoring.function(fn, id.replace(/Function$/, ""));
    return fn;
  }
}
