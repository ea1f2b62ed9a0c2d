import { App } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { CHECKPOINT_TABLE } from "../../graph/checkpoint";
import type { StackSettings } from "../../infra/aws/settings";
import { AgentStack } from "../../infra/aws/stack";
import { deployedFunctions, FUNCTIONS } from "../../infra/manifest";
import { BLOCKS_ALL_PUBLIC_ACCESS, NO_BUNDLING, PRODUCTION_CONTEXT, PRODUCTION_SETTINGS } from "../support/deployment";

const MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0";
const stack = new AgentStack(new App({ context: NO_BUNDLING }), "Test", {
  settings: {
    ...PRODUCTION_SETTINGS,
    bedrockModelId: MODEL,
    bedrockNamingModelId: undefined,
    oidcIssuer: "https://auth.example.com/",
    oidcAudience: "agent-api",
  },
});
/** Another deployment of the stack, unbundled: only its template is read. */
const variant = (id: string, settings: Partial<StackSettings>) =>
  Template.fromStack(
    new AgentStack(new App({ context: NO_BUNDLING }), id, { settings: { ...PRODUCTION_SETTINGS, ...settings } }),
  );
const template = Template.fromStack(stack);
const ref = (construct: { node: { defaultChild?: unknown } }) =>
  stack.resolve((construct.node.defaultChild as { ref: string }).ref);

/** Statements of the inline policy attached to a function's role. */
function statementsOf(fn: typeof stack.chatFunction) {
  const roleRef = stack.resolve((fn.role!.node.defaultChild as unknown as { ref: string }).ref);
  const policies = template.findResources("AWS::IAM::Policy", { Properties: { Roles: [roleRef] } });
  return Object.values(policies).flatMap(
    (p) => (p as { Properties: { PolicyDocument: { Statement: unknown[] } } }).Properties.PolicyDocument.Statement,
  ) as {
    Action: string | string[];
    Resource: unknown;
  }[];
}
const actions = (fn: typeof stack.chatFunction) => statementsOf(fn).flatMap((s) => [s.Action].flat());
type Resource = { Properties: Record<string, any> };
const alarms = () => Object.values(template.findResources("AWS::CloudWatch::Alarm")) as Resource[];
/** Alarms on a metric, by its name (cdk-monitoring-constructs writes them as metric-math alarms). */
const alarmsOn = (metricName: string) =>
  alarms().filter((a) =>
    (a.Properties.Metrics as { MetricStat?: { Metric: { MetricName: string } } }[] | undefined)?.some(
      (m) => m.MetricStat?.Metric.MetricName === metricName,
    ),
  );
const dlqAlarms = () => alarmsOn("ApproximateNumberOfMessagesVisible");
/** A resource's synthesized properties, by construct. */
const propsOf = (construct: { node: { defaultChild?: unknown } }) =>
  template.toJSON().Resources[stack.getLogicalId(construct.node.defaultChild as never)].Properties as Record<
    string,
    any
  >;
const ourFunctions = () => [
  stack.chatFunction,
  stack.sessionsFunction,
  stack.memoriesFunction,
  stack.extractionFunction,
  stack.ingestFunction,
];

it("runs on x86_64 exactly the functions the manifest says ship a native module", () => {
  const x86 = Object.values(template.findResources("AWS::Lambda::Function")).filter((r) =>
    String(JSON.stringify(r.Properties.Architectures)).includes("x86_64"),
  );
  expect(FUNCTIONS.filter((f) => f.native === "duckdb").map((f) => f.name)).toEqual(["data"]);
  expect(x86).toHaveLength(1);
});

describe("checkpoint table", () => {
  it("uses the saver's key schema, on-demand billing, TTL and point-in-time recovery", () => {
    template.hasResourceProperties("AWS::DynamoDB::GlobalTable", {
      KeySchema: [
        { AttributeName: CHECKPOINT_TABLE.partitionKey, KeyType: "HASH" },
        { AttributeName: CHECKPOINT_TABLE.sortKey, KeyType: "RANGE" },
      ],
      BillingMode: "PAY_PER_REQUEST",
      TimeToLiveSpecification: { AttributeName: CHECKPOINT_TABLE.ttlAttribute, Enabled: true },
      Replicas: [
        { PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true }, DeletionProtectionEnabled: true },
      ],
    });
  });

  it("is kept when the stack is deleted", () => {
    template.hasResource("AWS::DynamoDB::GlobalTable", {
      Properties: Match.objectLike({
        KeySchema: Match.arrayWith([Match.objectLike({ AttributeName: CHECKPOINT_TABLE.sortKey })]),
      }),
      DeletionPolicy: "Retain",
      UpdateReplacePolicy: "Retain",
    });
  });
});

describe("functions", () => {
  it("run Node 22 on arm64 with the table name and no plain-text secret", () => {
    for (const f of ourFunctions()) {
      const fn = { Properties: propsOf(f) };
      expect(fn.Properties.Runtime).toBe("nodejs22.x");
      expect(fn.Properties.Architectures).toEqual(["arm64"]);
      const env = fn.Properties.Environment.Variables;
      expect(env.CHECKPOINT_TABLE).toEqual(ref(stack.checkpointTable));
      expect(env.SUPABASE_SERVICE_ROLE_KEY).toBeUndefined();
      expect(env.SUPABASE_SERVICE_ROLE_KEY_SECRET_ARN).toBeDefined();
    }
  });

  it("grants the chat function the table and Bedrock on the configured model only", () => {
    const statements = statementsOf(stack.chatFunction);
    const dynamo = statements.find((s) => [s.Action].flat().includes("dynamodb:BatchWriteItem"))!;
    expect(JSON.stringify(dynamo.Resource)).toContain(
      Object.keys(template.findResources("AWS::DynamoDB::GlobalTable"))[0],
    );
    const bedrock = statements.find((s) => [s.Action].flat().includes("bedrock:InvokeModel"))!;
    expect([bedrock.Action].flat().sort()).toEqual(["bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream"]);
    expect(JSON.stringify(bedrock.Resource)).toContain(`foundation-model/${MODEL}`);
    expect(JSON.stringify(bedrock.Resource)).not.toContain('"*"');
  });

  it("gives the store-only functions no Bedrock, and DynamoDB only to sessions (ownership and deleteThread)", () => {
    for (const fn of [stack.sessionsFunction, stack.memoriesFunction]) {
      expect(actions(fn).filter((a) => a.startsWith("bedrock:"))).toEqual([]);
      expect(actions(fn)).toContain("secretsmanager:GetSecretValue");
    }
    expect(actions(stack.memoriesFunction).filter((a) => a.startsWith("dynamodb:"))).toEqual([]);
    const dynamo = statementsOf(stack.sessionsFunction).filter((s) =>
      [s.Action].flat().some((a) => a.startsWith("dynamodb:")),
    );
    expect(JSON.stringify(dynamo.map((s) => s.Resource))).toContain(
      stack.getLogicalId(stack.checkpointTable.node.defaultChild as never),
    );
    expect(JSON.stringify(dynamo.map((s) => s.Resource))).not.toContain(
      stack.getLogicalId(stack.idempotencyTable.node.defaultChild as never),
    );
  });
});

describe("memory extraction", () => {
  it("has a queue with a dead-letter queue after 3 receives and a visibility timeout of 6x the function timeout", () => {
    const queue = { Properties: propsOf(stack.extractionQueue) };
    expect(queue.Properties.RedrivePolicy.maxReceiveCount).toBe(3);
    expect(propsOf(stack.extractionFunction).Timeout).toBe(60);
    expect(queue.Properties.VisibilityTimeout).toBe(360);
    expect(queue.Properties.SqsManagedSseEnabled).toBe(true);
  });

  it("alarms when anything reaches the dead-letter queue", () => {
    const dlq = stack.getLogicalId(stack.extractionDeadLetters.node.defaultChild as never);
    const alarm = dlqAlarms().find((a) => JSON.stringify(a.Properties.Metrics).includes(dlq));
    expect(alarm?.Properties).toMatchObject({ Threshold: 0, ComparisonOperator: "GreaterThanThreshold" });
    expect(alarm?.Properties.AlarmActions).toHaveLength(1);
  });

  it("feeds the extraction function with partial batch failures and bounded concurrency", () => {
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      FunctionResponseTypes: ["ReportBatchItemFailures"],
      BatchSize: 10,
      ScalingConfig: { MaximumConcurrency: 5 },
      FunctionName: { Ref: stack.getLogicalId(stack.extractionFunction.node.defaultChild as never) },
    });
  });

  it("lets only the chat functions send to the queue, and gives them the queue URL", () => {
    const senders = [
      stack.chatFunction,
      stack.chatStreamFunction,
      stack.sessionsFunction,
      stack.memoriesFunction,
      stack.extractionFunction,
    ].filter((fn) => actions(fn).includes("sqs:SendMessage"));
    expect(senders).toEqual([stack.chatFunction, stack.chatStreamFunction]);
    const chat = template.findResources("AWS::Lambda::Function", { Properties: { Timeout: 29 } });
    const env = (Object.values(chat)[0] as any).Properties.Environment.Variables;
    expect(env.EXTRACTION_QUEUE_URL).toEqual({
      Ref: stack.getLogicalId(stack.extractionQueue.node.defaultChild as never),
    });
  });

  it("keeps idempotency records in their own table with a TTL, written only by the extraction function", () => {
    template.hasResourceProperties("AWS::DynamoDB::GlobalTable", {
      KeySchema: [{ AttributeName: "id", KeyType: "HASH" }],
      TimeToLiveSpecification: { AttributeName: "expiration", Enabled: true },
    });
    const idempotencyArn = stack.getLogicalId(stack.idempotencyTable.node.defaultChild as never);
    for (const fn of [stack.chatFunction, stack.chatStreamFunction, stack.sessionsFunction, stack.memoriesFunction]) {
      expect(JSON.stringify(statementsOf(fn))).not.toContain(idempotencyArn);
    }
    expect(JSON.stringify(statementsOf(stack.extractionFunction))).toContain(idempotencyArn);
  });

  it("lets the extraction function call only the configured Bedrock models", () => {
    const bedrock = statementsOf(stack.extractionFunction).find((s) =>
      [s.Action].flat().includes("bedrock:InvokeModel"),
    )!;
    expect(JSON.stringify(bedrock.Resource)).toContain("foundation-model/amazon.titan-embed-text-v2:0");
    expect(JSON.stringify(bedrock.Resource)).toContain(`foundation-model/${MODEL}`);
  });
});

/** The functions (of those that could) whose role may send to a queue. */
const SENDER_CANDIDATES = [
  "chat",
  "chat-stream",
  "sessions",
  "agent-server",
  "agent-server-stream",
  "run-worker",
  "webhook-sender",
  "me",
];
const sendersTo = (queue: { node: { defaultChild?: unknown } }) => {
  const id = stack.getLogicalId(queue.node.defaultChild as never);
  return SENDER_CANDIDATES.filter((name) =>
    statementsOf(stack.functions.get(name)!).some(
      (st) => [st.Action].flat().includes("sqs:SendMessage") && JSON.stringify(st.Resource).includes(id),
    ),
  );
};

describe("background runs", () => {
  const worker = () => stack.functions.get("run-worker")!;
  const agentServer = () => stack.functions.get("agent-server")!;

  it("feed the run worker from its own queue: one run per invocation, a DLQ after 3 receives, an alarm, partial batch failures", () => {
    expect(propsOf(worker()).Timeout).toBe(900);
    const queue = propsOf(stack.runsQueue);
    expect(queue.VisibilityTimeout).toBe(900 * 6);
    expect(queue.RedrivePolicy.maxReceiveCount).toBe(3);
    expect(queue.SqsManagedSseEnabled).toBe(true);
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      FunctionResponseTypes: ["ReportBatchItemFailures"],
      BatchSize: 1,
      FunctionName: { Ref: stack.getLogicalId(worker().node.defaultChild as never) },
    });
    const dlq = stack.getLogicalId(stack.runsDeadLetters.node.defaultChild as never);
    expect(dlqAlarms().some((a) => JSON.stringify(a.Properties.Metrics).includes(dlq))).toBe(true);
  });

  it("let only the Agent Server API send runs to the worker; the worker has the table and the models, and sends no runs", () => {
    const queueRef = ref(stack.runsQueue);
    expect(sendersTo(stack.runsQueue)).toEqual(["agent-server"]);
    expect(propsOf(agentServer()).Environment.Variables.RUNS_QUEUE_URL).toEqual(queueRef);
    expect(actions(worker())).toEqual(
      expect.arrayContaining(["dynamodb:PutItem", "dynamodb:Query", "bedrock:InvokeModel"]),
    );
    expect(propsOf(worker()).Environment.Variables.RUNS_QUEUE_URL).toBeUndefined();
  });

  it("post completion webhooks through the sender's own queue (DLQ, alarm); only the run functions send to it", () => {
    const sender = stack.functions.get("webhook-sender")!;
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      FunctionResponseTypes: ["ReportBatchItemFailures"],
      FunctionName: { Ref: stack.getLogicalId(sender.node.defaultChild as never) },
    });
    expect(propsOf(stack.webhooksQueue).RedrivePolicy.maxReceiveCount).toBe(3);
    const dlq = stack.getLogicalId(stack.webhooksDeadLetters.node.defaultChild as never);
    expect(dlqAlarms().some((a) => JSON.stringify(a.Properties.Metrics).includes(dlq))).toBe(true);
    expect(sendersTo(stack.webhooksQueue)).toEqual([
      "agent-server",
      "agent-server-stream",
      "run-worker",
      "webhook-sender",
    ]);
    // The sender reads nothing: no table, no model, no secret.
    expect(actions(sender).filter((a) => !a.startsWith("sqs:"))).toEqual([]);
  });

  it("allow webhooks only to the hosts the context names", () => {
    expect(propsOf(stack.functions.get("webhook-sender")!).Environment.Variables.WEBHOOK_HOSTS).toBeUndefined();
    const named = variant("Webhooks", { webhookHosts: ["hooks.example.com", "api.partner.io:8443"] });
    const env = Object.values(named.findResources("AWS::Lambda::Function")).map(
      (f) => (f as Resource).Properties.Environment?.Variables?.WEBHOOK_HOSTS,
    );
    expect(env).toContain("hooks.example.com,api.partner.io:8443");
  });

  it("schedule crons with EventBridge Scheduler: a group, a role that only sends to the runs queue, alarms on failed firings", () => {
    template.resourceCountIs("AWS::Scheduler::ScheduleGroup", 1);
    const roles = Object.entries(template.findResources("AWS::IAM::Role")).filter(([, r]) =>
      JSON.stringify((r as Resource).Properties.AssumeRolePolicyDocument).includes("scheduler.amazonaws.com"),
    );
    expect(roles).toHaveLength(1);
    const [roleId] = roles[0]!;
    const rolePolicies = Object.values(
      template.findResources("AWS::IAM::Policy", { Properties: { Roles: [{ Ref: roleId }] } }),
    );
    const statements = rolePolicies.flatMap((p) => (p as Resource).Properties.PolicyDocument.Statement);
    expect(statements.flatMap((st: { Action: string | string[] }) => [st.Action].flat()).sort()).toEqual(
      ["sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:SendMessage"].sort(),
    );
    expect(JSON.stringify(statements)).toContain(stack.getLogicalId(stack.runsQueue.node.defaultChild as never));
    const manage = (name: string) => actions(stack.functions.get(name)!);
    for (const name of ["agent-server", "run-worker"]) {
      expect(manage(name)).toEqual(
        expect.arrayContaining(["scheduler:CreateSchedule", "scheduler:DeleteSchedule", "iam:PassRole"]),
      );
      expect(propsOf(stack.functions.get(name)!).Environment.Variables.CRON_SCHEDULE_GROUP).toBeDefined();
    }
    for (const name of ["chat", "sessions", "agent-server-stream", "webhook-sender"])
      expect(manage(name).filter((a) => a.startsWith("scheduler:") || a === "iam:PassRole")).toEqual([]);
    // The erasure removes a user's schedules (they name the user), and may make none.
    expect(manage("me").filter((a) => a.startsWith("scheduler:") || a === "iam:PassRole")).toEqual([
      "scheduler:DeleteSchedule",
    ]);
    expect(propsOf(stack.functions.get("me")!).Environment.Variables.CRON_SCHEDULE_GROUP).toBeDefined();
    const cronAlarms = alarms().filter((a) => a.Properties.Namespace === "AWS/Scheduler");
    expect(cronAlarms.map((a) => a.Properties.MetricName).sort()).toEqual([
      "InvocationDroppedCount",
      "TargetErrorCount",
    ]);
    expect(cronAlarms.every((a) => a.Properties.AlarmActions?.length === 1)).toBe(true);
  });

  it("keep their events in the checkpoint table, whose TTL expires them", () => {
    template.hasResourceProperties("AWS::DynamoDB::GlobalTable", {
      TimeToLiveSpecification: { AttributeName: CHECKPOINT_TABLE.ttlAttribute, Enabled: true },
    });
  });
});

describe("document ingestion", () => {
  it("has a private, encrypted, versioned bucket that refuses plain HTTP", () => {
    template.hasResourceProperties("AWS::S3::Bucket", {
      PublicAccessBlockConfiguration: BLOCKS_ALL_PUBLIC_ACCESS,
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: "AES256" } }],
      },
      VersioningConfiguration: { Status: "Enabled" },
    });
    template.hasResourceProperties("AWS::S3::BucketPolicy", {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: "Deny", Condition: { Bool: { "aws:SecureTransport": "false" } } }),
        ]),
      },
    });
  });

  // S3 matches a suffix filter to the letter, so filtering by extension would never announce
  // Guide.PDF, which the upload route takes and ingestion reads (extensions are read lower-cased).
  it("sends every created and removed event under the prefix to the ingest queue, whatever the extension's case", () => {
    const notifications = template.findResources("Custom::S3BucketNotifications");
    const config = (Object.values(notifications)[0] as any).Properties.NotificationConfiguration
      .QueueConfigurations as any[];
    const ingestQueueArn = { "Fn::GetAtt": [stack.getLogicalId(stack.ingestQueue.node.defaultChild as never), "Arn"] };
    expect(config.map((c) => c.Events[0]).sort()).toEqual(["s3:ObjectCreated:*", "s3:ObjectRemoved:*"]);
    for (const c of config) {
      expect(c.QueueArn).toEqual(ingestQueueArn);
      expect(c.Filter.Key.FilterRules).toEqual([{ Name: "prefix", Value: "knowledge/" }]);
    }
  });

  it("gives the ingest function read-only access to the prefix, and its own queue with a DLQ and alarm", () => {
    const s3 = statementsOf(stack.ingestFunction).filter((s) => [s.Action].flat().some((a) => a.startsWith("s3:")));
    expect(s3.flatMap((s) => [s.Action].flat()).every((a) => /^s3:(Get|List)/.test(a))).toBe(true);
    expect(JSON.stringify(s3.map((s) => s.Resource))).toContain("/knowledge/*");
    // Listing the bucket itself: without it S3 answers a missing key 403, not 404, and a removal's
    // check of the key (HeadObject) would retry into the dead-letter queue.
    const bucketArn = { "Fn::GetAtt": [stack.getLogicalId(stack.documentsBucket.node.defaultChild as never), "Arn"] };
    const lists = s3.filter((s) => [s.Action].flat().some((a) => a === "s3:ListBucket" || a === "s3:List*"));
    expect(lists.flatMap((s) => [s.Resource].flat())).toContainEqual(bucketArn);
    for (const fn of [
      stack.chatFunction,
      stack.chatStreamFunction,
      stack.extractionFunction,
      stack.sessionsFunction,
      stack.memoriesFunction,
    ]) {
      // Nothing on the documents bucket (the chat and sessions functions have their users' attachments).
      const documents = stack.getLogicalId(stack.documentsBucket.node.defaultChild as never);
      expect(statementsOf(fn).filter((st) => JSON.stringify(st.Resource).includes(documents))).toEqual([]);
    }
    const queue = propsOf(stack.ingestQueue);
    expect(queue.VisibilityTimeout).toBe(720);
    expect(queue.RedrivePolicy.maxReceiveCount).toBe(3);
    expect(dlqAlarms()).toHaveLength(5); // extraction, ingest, support, runs and webhooks
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      FunctionResponseTypes: ["ReportBatchItemFailures"],
      FunctionName: { Ref: stack.getLogicalId(stack.ingestFunction.node.defaultChild as never) },
    });
  });
});

describe("Intercom support", () => {
  const secretRef = (name: string) =>
    Object.entries(template.findResources("AWS::SecretsManager::Secret")).find(([id]) => id.startsWith(name))![0];

  it("reads each Intercom secret only where it is needed", () => {
    const token = secretRef("IntercomAccessToken");
    const clientSecret = secretRef("IntercomClientSecret");
    const reads = (fn: typeof stack.chatFunction) => JSON.stringify(statementsOf(fn));
    expect(reads(stack.supportWorkerFunction!)).toContain(token);
    expect(reads(stack.supportWorkerFunction!)).not.toContain(clientSecret);
    expect(reads(stack.intercomWebhookFunction!)).toContain(clientSecret);
    expect(reads(stack.intercomWebhookFunction!)).not.toContain(token);
    for (const fn of [
      stack.chatFunction,
      stack.chatStreamFunction,
      stack.sessionsFunction,
      stack.memoriesFunction,
      stack.extractionFunction,
      stack.ingestFunction,
    ]) {
      expect(reads(fn)).not.toContain(token);
      expect(reads(fn)).not.toContain(clientSecret);
    }
    expect(propsOf(stack.intercomWebhookFunction!).Environment.Variables.INTERCOM_CLIENT_SECRET).toBeUndefined();
  });

  it("queues from the webhook to the worker, with a DLQ, an alarm and partial batch failures", () => {
    const queue = propsOf(stack.supportQueue!);
    expect(queue.RedrivePolicy.maxReceiveCount).toBe(3);
    expect(queue.VisibilityTimeout).toBe(720);
    expect(actions(stack.intercomWebhookFunction!)).toContain("sqs:SendMessage");
    expect(actions(stack.supportWorkerFunction!)).not.toContain("sqs:SendMessage");
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      FunctionResponseTypes: ["ReportBatchItemFailures"],
      FunctionName: { Ref: stack.getLogicalId(stack.supportWorkerFunction!.node.defaultChild as never) },
    });
  });
});

describe("observability", () => {
  it("alarms on errors and throttles of every function, and on the API's 5xx rate", () => {
    for (const fn of [...ourFunctions(), stack.authorizerFunction]) {
      const ref = stack.getLogicalId(fn.node.defaultChild as never);
      for (const metric of ["Errors", "Throttles"]) {
        const alarm = alarmsOn(metric).find((a) => JSON.stringify(a.Properties.Metrics).includes(ref));
        expect(alarm?.Properties).toMatchObject({ Threshold: 0, ComparisonOperator: "GreaterThanThreshold" });
      }
    }
    // 5XXError's average is the share of requests answered 5xx: above 5%.
    const [rate] = alarmsOn("5XXError");
    expect(rate?.Properties).toMatchObject({ Threshold: 0.05, ComparisonOperator: "GreaterThanThreshold" });
  });

  it("sends every alarm to one SNS topic, with the on-call email subscribed", () => {
    const topics = Object.keys(template.findResources("AWS::SNS::Topic"));
    expect(topics).toHaveLength(1);
    expect(alarms().length).toBeGreaterThanOrEqual(25);
    for (const alarm of alarms()) expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topics[0] }]);
    template.hasResourceProperties("AWS::SNS::Subscription", {
      Protocol: "email",
      Endpoint: PRODUCTION_SETTINGS.alarmEmail,
    });
  });

  it("has a dashboard of replies, latency, tool calls, errors, queues and dead letters", () => {
    const [dashboard] = Object.values(template.findResources("AWS::CloudWatch::Dashboard")) as Resource[];
    const body = JSON.stringify(dashboard!.Properties.DashboardBody);
    for (const metric of [
      "Replies",
      "ModelLatency",
      "ToolCalls",
      "Errors",
      "ApproximateNumberOfMessagesVisible",
      "ApproximateAgeOfOldestMessage",
      "DeadLettered",
    ])
      expect(body).toContain(metric);
  });

  it("writes API access logs as JSON, and leaves tracing off unless the context turns it on", () => {
    template.hasResourceProperties("AWS::ApiGateway::Stage", {
      AccessLogSetting: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp("requestId") },
      TracingEnabled: false,
    });
    expect(propsOf(stack.chatFunction).TracingConfig?.Mode).not.toBe("Active");
    const t = variant("Traced", { tracing: true });
    t.hasResourceProperties("AWS::ApiGateway::Stage", { TracingEnabled: true });
    t.hasResourceProperties("AWS::Lambda::Function", { TracingConfig: { Mode: "Active" } });
  });
});

describe("REST API", () => {
  it("routes each API method to its function by Lambda proxy", () => {
    const routes = deployedFunctions({ intercom: true }).flatMap((spec) =>
      (spec.routes ?? []).map((route) => [route.method, stack.functions.get(spec.name)!] as const),
    );
    expect(routes.length).toBeGreaterThanOrEqual(10);
    template.resourceCountIs("AWS::ApiGateway::Method", routes.length);
    for (const [method, fn] of routes) {
      template.hasResourceProperties("AWS::ApiGateway::Method", {
        HttpMethod: method,
        Integration: {
          Type: "AWS_PROXY",
          Uri: {
            "Fn::Join": [
              "",
              Match.arrayWith([
                Match.objectLike({ "Fn::GetAtt": [stack.getLogicalId(fn.node.defaultChild as never), "Arn"] }),
              ]),
            ],
          },
        },
      });
    }
    template.hasResourceProperties("AWS::ApiGateway::Resource", { PathPart: "{id}" });
  });

  it("streams /api/chat/stream through Lambda response streaming", () => {
    const streamFn = stack.getLogicalId(stack.chatStreamFunction.node.defaultChild as never);
    template.hasResourceProperties("AWS::ApiGateway::Method", {
      HttpMethod: "POST",
      Integration: {
        Type: "AWS_PROXY",
        ResponseTransferMode: "STREAM",
        Uri: {
          "Fn::Join": ["", Match.arrayWith([{ "Fn::GetAtt": [streamFn, "Arn"] }, "/response-streaming-invocations"])],
        },
      },
    });
    const streamed = template.findResources("AWS::ApiGateway::Method", {
      Properties: { Integration: { ResponseTransferMode: "STREAM" } },
    });
    // Exactly the manifest's streaming routes: /api/chat/stream and the Agent Server API's run streams.
    const streamingRoutes = FUNCTIONS.flatMap((f) => f.routes ?? []).filter((r) => r.streaming);
    expect(Object.keys(streamed)).toHaveLength(streamingRoutes.length);
    expect(actions(stack.chatStreamFunction)).toContain("sqs:SendMessage");
  });

  it("requires the JWT authorizer on every /api route, and leaves the signed Intercom webhook to its signature", () => {
    const authorizers = template.findResources("AWS::ApiGateway::Authorizer") as Record<
      string,
      { Properties: Record<string, unknown> }
    >;
    const ofType = (type: string) => Object.keys(authorizers).filter((id) => authorizers[id]!.Properties.Type === type);
    expect(Object.keys(authorizers)).toHaveLength(2);
    const authorizerId = ofType("TOKEN")[0]!;
    expect(authorizers[authorizerId]!.Properties).toMatchObject({
      IdentitySource: "method.request.header.Authorization",
      AuthorizerResultTtlInSeconds: 300,
    });
    // The Agent Server API's routes also take x-api-key: the same function, uncached, on either header.
    const keyHeaderId = ofType("REQUEST")[0]!;
    expect(authorizers[keyHeaderId]!.Properties).toMatchObject({ AuthorizerResultTtlInSeconds: 0 });
    expect(authorizers[keyHeaderId]!.Properties.IdentitySource).toBeFalsy(); // none: either header will do
    const resources = template.findResources("AWS::ApiGateway::Resource");
    const pathOf = (ref: { Ref?: string }): string => {
      const resource = ref.Ref ? resources[ref.Ref] : undefined;
      return resource ? `${pathOf(resource.Properties.ParentId)}/${resource.Properties.PathPart}` : "";
    };
    const keyHeaderPaths = new Set(
      FUNCTIONS.flatMap((f) => f.routes ?? [])
        .filter((r) => r.apiKeyHeader)
        .map((r) => r.path),
    );
    const methods = Object.values(template.findResources("AWS::ApiGateway::Method")) as {
      Properties: Record<string, any>;
    }[];
    const webhookFn = stack.getLogicalId(stack.intercomWebhookFunction!.node.defaultChild as never);
    for (const m of methods) {
      const isWebhook = JSON.stringify(m.Properties.Integration.Uri).includes(webhookFn);
      const path = pathOf(m.Properties.ResourceId);
      if (isWebhook) expect(m.Properties.AuthorizationType).toBe("NONE");
      else if (keyHeaderPaths.has(path))
        expect(m.Properties).toMatchObject({ AuthorizationType: "CUSTOM", AuthorizerId: { Ref: keyHeaderId } });
      else expect(m.Properties).toMatchObject({ AuthorizationType: "CUSTOM", AuthorizerId: { Ref: authorizerId } });
    }
    expect(propsOf(stack.authorizerFunction)).toMatchObject({ Runtime: "nodejs22.x", Architectures: ["arm64"] });
    expect(propsOf(stack.authorizerFunction).Environment.Variables).toEqual({
      OIDC_ISSUER: "https://auth.example.com/",
      OIDC_AUDIENCE: "agent-api",
    });
  });

  it("throttles the stage", () => {
    template.hasResourceProperties("AWS::ApiGateway::Stage", {
      MethodSettings: Match.arrayWith([Match.objectLike({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 })]),
    });
  });
});

describe("settings from context", () => {
  it("caps each queue consumer at queueConcurrency, refusing values Lambda would reject", async () => {
    const { readSettings } = await import("../../infra/aws/settings");
    expect(readSettings(new App({ context: { ...PRODUCTION_CONTEXT, queueConcurrency: "20" } })).queueConcurrency).toBe(
      20,
    );
    expect(readSettings(new App({ context: PRODUCTION_CONTEXT })).queueConcurrency).toBe(5);
    expect(() => readSettings(new App({ context: { ...PRODUCTION_CONTEXT, queueConcurrency: "1" } }))).toThrow(
      /queueConcurrency/,
    );
    expect(() => readSettings(new App({ context: { ...PRODUCTION_CONTEXT, queueConcurrency: "lots" } }))).toThrow(
      /queueConcurrency/,
    );
  });

  it("validates the embedding dimension and TTL, and hands the dimension to the functions", async () => {
    const { readSettings } = await import("../../infra/aws/settings");
    expect(
      readSettings(new App({ context: { ...PRODUCTION_CONTEXT, embeddingDimension: "512", checkpointTtlDays: "30" } })),
    ).toMatchObject({
      embeddingDimension: 512,
      checkpointTtlDays: 30,
    });
    expect(() => readSettings(new App({ context: { ...PRODUCTION_CONTEXT, embeddingDimension: "4096" } }))).toThrow(
      /embeddingDimension/,
    );
    expect(() => readSettings(new App({ context: { ...PRODUCTION_CONTEXT, checkpointTtlDays: "soon" } }))).toThrow(
      /checkpointTtlDays/,
    );
    expect(
      readSettings(
        new App({ context: { ...PRODUCTION_CONTEXT, webhookHosts: " Hooks.example.com ,api.partner.io:8443" } }),
      ).webhookHosts,
    ).toEqual(["hooks.example.com", "api.partner.io:8443"]);
    for (const bad of ["https://hooks.example.com", "hooks.example.com/path", "*.example.com", "host:port"])
      expect(() => readSettings(new App({ context: { ...PRODUCTION_CONTEXT, webhookHosts: bad } }))).toThrow(
        /webhookHosts/,
      );
    variant("Narrow", { embeddingDimension: 512 }).hasResourceProperties("AWS::Lambda::Function", {
      Environment: { Variables: Match.objectLike({ EMBEDDING_DIM: "512" }) },
    });
  });
});

describe("API request validation", () => {
  it("validates chat bodies at the gateway against the handlers' schema, answering in their error shape", () => {
    template.hasResourceProperties("AWS::ApiGateway::RequestValidator", { ValidateRequestBody: true });
    const models = Object.values(template.findResources("AWS::ApiGateway::Model"));
    expect(models).toHaveLength(1);
    const schema = models[0]!.Properties.Schema;
    expect(schema).toMatchObject({
      $schema: "http://json-schema.org/draft-04/schema#",
      type: "object",
      required: ["message"],
      properties: { message: { type: "string", maxLength: 16384 }, if_busy: { enum: ["reject", "queue"] } },
    });
    const chatMethods = Object.values(template.findResources("AWS::ApiGateway::Method")).filter(
      (m) => m.Properties.RequestModels,
    );
    expect(chatMethods).toHaveLength(2);
    for (const m of chatMethods) expect(m.Properties.RequestValidatorId).toBeDefined();
    for (const type of ["DEFAULT_4XX", "DEFAULT_5XX"])
      template.hasResourceProperties("AWS::ApiGateway::GatewayResponse", {
        ResponseType: type,
        ResponseTemplates: { "application/json": Match.stringLikeRegexp('"error":\\{"code"') },
      });
  });
});

describe("API keys", () => {
  const t = variant("Keyed", {
    apiKeys: [
      { client: "billing", trusted: true },
      { client: "reports", trusted: false },
    ],
  });

  it("are off by default: no keys, no plans, no key required", () => {
    template.resourceCountIs("AWS::ApiGateway::ApiKey", 0);
    template.resourceCountIs("AWS::ApiGateway::UsagePlan", 0);
    for (const m of Object.values(template.findResources("AWS::ApiGateway::Method")))
      expect(m.Properties.ApiKeyRequired).not.toBe(true);
  });

  it("give each client a tagged key under a metered plan, and JWT users one throttled key", () => {
    t.hasResourceProperties("AWS::ApiGateway::RestApi", { ApiKeySourceType: "AUTHORIZER" });
    for (const [client, trusted] of [
      ["billing", "true"],
      ["reports", "false"],
    ])
      t.hasResourceProperties("AWS::ApiGateway::ApiKey", {
        Tags: Match.arrayWith([
          { Key: "client", Value: client },
          { Key: "trusted", Value: trusted },
        ]),
      });
    const usersKey = Object.values(t.findResources("AWS::ApiGateway::ApiKey")).find((k) => k.Properties.Value);
    expect(JSON.stringify(usersKey!.Properties.Value)).toMatch(/resolve:secretsmanager:.*SecretString/);
    t.hasResourceProperties("AWS::ApiGateway::UsagePlan", {
      Quota: { Limit: 100000, Period: "DAY" },
      Throttle: { RateLimit: 10, BurstLimit: 20 },
    });
    t.resourceCountIs("AWS::ApiGateway::UsagePlanKey", 3);
  });

  it("require a key on every /api method and let the authorizer read the keys", () => {
    const methods = Object.values(t.findResources("AWS::ApiGateway::Method"));
    const api = methods.filter((m) => m.Properties.AuthorizationType === "CUSTOM");
    expect(api.length).toBeGreaterThan(0);
    for (const m of api) expect(m.Properties.ApiKeyRequired).toBe(true);
    const authorizer = Object.values(t.findResources("AWS::Lambda::Function")).find(
      (f) => f.Properties.Environment?.Variables?.USERS_API_KEY_SECRET_ARN,
    );
    expect(authorizer).toBeDefined();
    // Keys are named <stack>-<client>; the authorizer knows only those.
    const stackName = authorizer!.Properties.Environment.Variables.API_KEY_STACK;
    const keys = Object.values(t.findResources("AWS::ApiGateway::ApiKey")).map((k) => k.Properties.Name);
    expect(keys).toContain(`${stackName}-billing`);
    const statements = Object.values(t.findResources("AWS::IAM::Policy")).flatMap(
      (p) => p.Properties.PolicyDocument.Statement,
    );
    expect(statements).toContainEqual(
      expect.objectContaining({
        Action: "apigateway:GET",
        Resource: {
          "Fn::Join": ["", ["arn:", { Ref: "AWS::Partition" }, ":apigateway:", { Ref: "AWS::Region" }, "::/apikeys"]],
        },
      }),
    );
  });

  it("parse from context, refusing a malformed entry", async () => {
    const { readSettings } = await import("../../infra/aws/settings");
    expect(
      readSettings(new App({ context: { ...PRODUCTION_CONTEXT, apiKeys: "billing:trusted, reports" } })).apiKeys,
    ).toEqual([
      { client: "billing", trusted: true },
      { client: "reports", trusted: false },
    ]);
    expect(() => readSettings(new App({ context: { ...PRODUCTION_CONTEXT, apiKeys: "bad name" } }))).toThrow(/apiKeys/);
  });
});

describe("CORS", () => {
  const t = variant("Browser", { corsOrigins: ["https://chat.example.org"] });

  it("answers no preflight and names no origin by default", () => {
    const options = Object.values(template.findResources("AWS::ApiGateway::Method")).filter(
      (m) => m.Properties.HttpMethod === "OPTIONS",
    );
    expect(options).toHaveLength(0);
    for (const fn of Object.values(template.findResources("AWS::Lambda::Function")))
      expect(fn.Properties.Environment?.Variables?.CORS_ORIGINS).toBeUndefined();
  });

  it("answers preflights for the allowed origins only, without the authorizer, and tells the functions", () => {
    const options = Object.values(t.findResources("AWS::ApiGateway::Method")).filter(
      (m) => m.Properties.HttpMethod === "OPTIONS",
    );
    expect(options.length).toBeGreaterThan(0);
    for (const m of options) {
      expect(m.Properties.AuthorizationType).toBe("NONE");
      expect(JSON.stringify(m.Properties.Integration)).toContain("https://chat.example.org");
    }
    const agentServer = Object.values(t.findResources("AWS::Lambda::Function")).find((fn) =>
      JSON.stringify(fn.Properties.Environment?.Variables ?? {}).includes("CORS_ORIGINS"),
    );
    expect(agentServer?.Properties.Environment.Variables.CORS_ORIGINS).toBe("https://chat.example.org");
  });

  it("parses from context, refusing what is not an origin", async () => {
    const { readSettings } = await import("../../infra/aws/settings");
    const read = (corsOrigins: string) => readSettings(new App({ context: { ...PRODUCTION_CONTEXT, corsOrigins } }));
    expect(read("https://a.example.org, http://localhost:5173").corsOrigins).toEqual([
      "https://a.example.org",
      "http://localhost:5173",
    ]);
    expect(read("*").corsOrigins).toEqual(["*"]);
    expect(() => read("https://a.example.org/path")).toThrow(/corsOrigins/);
    expect(() => read("a.example.org")).toThrow(/corsOrigins/);
  });
});
