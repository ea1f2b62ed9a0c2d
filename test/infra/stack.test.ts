import { App } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { CHECKPOINT_TABLE } from "../../graph/checkpoint";
import { AgentStack } from "../../infra/aws/stack";

const MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0";
const stack = new AgentStack(new App(), "Test", {
  settings: {
    supabaseUrl: "https://abc.supabase.co",
    bedrockModelId: MODEL,
    bedrockEmbeddingModelId: "amazon.titan-embed-text-v2:0",
  },
});
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
  it("run Node 22 on arm64 with the table name and no plain-text secret in the environment", () => {
    const fns = template.findResources("AWS::Lambda::Function");
    expect(Object.keys(fns)).toHaveLength(4);
    for (const fn of Object.values(fns) as { Properties: Record<string, any> }[]) {
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

  it("gives the sessions function no DynamoDB or Bedrock access", () => {
    expect(
      actions(stack.sessionsFunction).filter((a) => a.startsWith("dynamodb:") || a.startsWith("bedrock:")),
    ).toEqual([]);
    expect(actions(stack.sessionsFunction)).toContain("secretsmanager:GetSecretValue");
  });
});

describe("memory extraction", () => {
  const queues = () => template.findResources("AWS::SQS::Queue");
  const mainQueue = () =>
    Object.values(queues()).find((q: any) => q.Properties.RedrivePolicy) as { Properties: Record<string, any> };

  it("has a queue with a dead-letter queue after 3 receives and a visibility timeout of 6x the function timeout", () => {
    const queue = mainQueue();
    expect(queue.Properties.RedrivePolicy.maxReceiveCount).toBe(3);
    const fn = template.findResources("AWS::Lambda::Function", {
      Properties: { Handler: "index.handler", Timeout: 60 },
    });
    expect(Object.keys(fn)).toHaveLength(1);
    expect(queue.Properties.VisibilityTimeout).toBe(360);
    expect(queue.Properties.SqsManagedSseEnabled).toBe(true);
  });

  it("alarms when anything reaches the dead-letter queue", () => {
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "ApproximateNumberOfMessagesVisible",
      Namespace: "AWS/SQS",
      Threshold: 1,
      ComparisonOperator: "GreaterThanOrEqualToThreshold",
    });
  });

  it("feeds the extraction function with partial batch failures and bounded concurrency", () => {
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      FunctionResponseTypes: ["ReportBatchItemFailures"],
      BatchSize: 10,
      ScalingConfig: { MaximumConcurrency: 5 },
      FunctionName: { Ref: stack.getLogicalId(stack.extractionFunction.node.defaultChild as never) },
    });
  });

  it("lets only the chat function send to the queue, and gives it the queue URL", () => {
    const senders = [
      stack.chatFunction,
      stack.sessionsFunction,
      stack.memoriesFunction,
      stack.extractionFunction,
    ].filter((fn) => actions(fn).includes("sqs:SendMessage"));
    expect(senders).toEqual([stack.chatFunction]);
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
    for (const fn of [stack.chatFunction, stack.sessionsFunction, stack.memoriesFunction]) {
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

describe("REST API", () => {
  it("routes each API method to its function by Lambda proxy", () => {
    template.resourceCountIs("AWS::ApiGateway::Method", 4);
    for (const [method, fn] of [
      ["POST", stack.chatFunction],
      ["GET", stack.sessionsFunction],
      ["GET", stack.memoriesFunction],
      ["DELETE", stack.memoriesFunction],
    ] as const) {
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

  it("throttles the stage", () => {
    template.hasResourceProperties("AWS::ApiGateway::Stage", {
      MethodSettings: Match.arrayWith([Match.objectLike({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 })]),
    });
  });
});
