import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { AgentStack } from "../../infra/aws/stack";
import { NO_BUNDLING, PRODUCTION_SETTINGS } from "../support/deployment";

// A user's data in AWS: the retention sweep runs hourly on an EventBridge schedule, with exactly
// the state table, Supabase and attachment deletes; the me function (export, erasure) may list
// and delete the users/ folder of the attachments bucket, and nothing outside it.
const template = Template.fromStack(
  new AgentStack(new App({ context: NO_BUNDLING }), "UserData", {
    settings: { ...PRODUCTION_SETTINGS, sessionRetentionDays: 30 },
  }),
);
type Resource = { Type: string; Properties: Record<string, any> };
const resources = Object.entries(template.toJSON().Resources as Record<string, Resource>);
const functionId = (prefix: string) =>
  resources.find(([id, r]) => r.Type === "AWS::Lambda::Function" && id.startsWith(prefix))![0];
const roleOf = (prefix: string) =>
  (resources.find(([id]) => id === functionId(prefix))![1].Properties.Role as { "Fn::GetAtt": [string, string] })[
    "Fn::GetAtt"
  ][0];
const statementsOf = (prefix: string) =>
  resources
    .filter(([, r]) => r.Type === "AWS::IAM::Policy" && r.Properties.Roles.some((x: any) => x.Ref === roleOf(prefix)))
    .flatMap(
      ([, r]) =>
        r.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: any; Condition?: any }[],
    );
const actionsOf = (prefix: string) => statementsOf(prefix).flatMap((s) => [s.Action].flat());

describe("session retention in AWS", () => {
  it("runs the sweep every hour on an EventBridge rule, without retries piling up", () => {
    const rules = resources.filter(([, r]) => r.Type === "AWS::Events::Rule");
    expect(rules).toHaveLength(1);
    const [, rule] = rules[0]!;
    expect(rule.Properties.ScheduleExpression).toBe("rate(1 hour)");
    expect(rule.Properties.Targets).toEqual([
      expect.objectContaining({
        Arn: { "Fn::GetAtt": [functionId("SessionRetentionFunction"), "Arn"] },
        RetryPolicy: { MaximumRetryAttempts: 0 },
      }),
    ]);
    template.hasResourceProperties("AWS::Lambda::Permission", {
      Action: "lambda:InvokeFunction",
      Principal: "events.amazonaws.com",
      FunctionName: { "Fn::GetAtt": [functionId("SessionRetentionFunction"), "Arn"] },
    });
  });

  it("gives the sweep the state table, attachment deletes and the Supabase key, and the setting", () => {
    const actions = actionsOf("SessionRetentionFunction");
    expect(actions).toEqual(expect.arrayContaining(["dynamodb:Query", "dynamodb:DeleteItem", "s3:DeleteObject"]));
    expect(actions).not.toContain("s3:PutObject");
    expect(actions).not.toContain("s3:ListBucket");
    expect(actions.some((a) => a.startsWith("bedrock:"))).toBe(false);
    const [, fn] = resources.find(([id]) => id === functionId("SessionRetentionFunction"))!;
    expect(fn.Properties.Environment.Variables.SESSION_RETENTION_DAYS).toBe("30");
  });
});

describe("export and erasure in AWS", () => {
  it("lets memory extraction add to usage items only: UpdateItem, the partition keys held to usage#", () => {
    const dynamo = statementsOf("MemoryExtraction").filter((s) =>
      [s.Action].flat().some((a) => a.startsWith("dynamodb:")),
    );
    const onState = dynamo.filter((s) => !JSON.stringify(s.Resource).includes("Idempotency"));
    expect(onState).toEqual([
      {
        Action: "dynamodb:UpdateItem",
        Effect: "Allow",
        Resource: expect.anything(),
        Condition: { "ForAllValues:StringLike": { "dynamodb:LeadingKeys": ["usage#*"] } },
      },
    ]);
  });

  it("indexes the state table by user, keys only, and lets the me function read that index", () => {
    const [, table] = resources.find(
      ([, r]) => r.Type === "AWS::DynamoDB::GlobalTable" && JSON.stringify(r.Properties).includes("by-user"),
    )!;
    expect(table.Properties.GlobalSecondaryIndexes).toEqual([
      {
        IndexName: "by-user",
        KeySchema: [
          { AttributeName: "user_id", KeyType: "HASH" },
          { AttributeName: "sk", KeyType: "RANGE" },
        ],
        Projection: { ProjectionType: "KEYS_ONLY" },
      },
    ]);
    const query = statementsOf("MeFunction").find((s) => [s.Action].flat().includes("dynamodb:Query"))!;
    expect(JSON.stringify(query.Resource)).toContain("/index/*");
  });

  it("lets the me function list only the users/ folder, sign downloads and delete under it, and write only exports", () => {
    const statements = statementsOf("MeFunction");
    const list = statements.find((s) => [s.Action].flat().includes("s3:ListBucket"))!;
    expect(list.Condition).toEqual({ StringLike: { "s3:prefix": ["users/*"] } });
    expect(actionsOf("MeFunction")).toEqual(expect.arrayContaining(["s3:GetObject", "s3:DeleteObject"]));
    const puts = statements.filter((s) => [s.Action].flat().includes("s3:PutObject"));
    expect(puts).toHaveLength(1);
    expect([puts[0]!.Action].flat()).toEqual(["s3:PutObject"]);
    expect(JSON.stringify(puts[0]!.Resource)).toMatch(/\/users\/\*\/exports\/\*"/);
    expect(actionsOf("MeFunction").some((a) => a.startsWith("bedrock:"))).toBe(false);
  });
});
