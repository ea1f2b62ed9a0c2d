import { App } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { CHECKPOINT_TABLE } from "../../graph/checkpoint";
import { AgentStack } from "../../infra/aws/stack";

const MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0";
const stack = new AgentStack(new App(), "Test", {
  settings: { supabaseUrl: "https://abc.supabase.co", bedrockModelId: MODEL },
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
    template.hasResource("AWS::DynamoDB::GlobalTable", { DeletionPolicy: "Retain", UpdateReplacePolicy: "Retain" });
  });
});

describe("functions", () => {
  it("run Node 22 on arm64 with the table name and no plain-text secret in the environment", () => {
    const fns = template.findResources("AWS::Lambda::Function");
    expect(Object.keys(fns)).toHaveLength(3);
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
