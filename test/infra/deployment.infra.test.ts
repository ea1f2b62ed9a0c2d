import { App } from "aws-cdk-lib";
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { bedrockModelArns } from "../../infra/aws/bedrock-access";
import { readSettings, REQUIRED_SETTINGS, type StackSettings } from "../../infra/aws/settings";
import { stackName } from "../../infra/aws/stack";
import { PRODUCTION_CONTEXT, PRODUCTION_SETTINGS } from "../support/deployment";
import { synthesized } from "../support/synth";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "../..");

const synth = (id: string, settings: StackSettings) =>
  synthesized(settings, id).template.toJSON() as {
    Resources: Record<string, { Type: string; Properties: Record<string, any> }>;
    Outputs: Record<string, { Value: unknown; Description?: string }>;
  };
const ofType = (template: ReturnType<typeof synth>, type: string) =>
  Object.entries(template.Resources).filter(([, r]) => r.Type === type);

describe("synth refuses a broken deployment", () => {
  it("fails `cdk synth` with no context, naming every missing setting and what it is for", async () => {
    const failure = await run("npx", ["cdk", "synth", "--no-notices", "--quiet"], {
      cwd: ROOT,
      env: { ...process.env, CDK_CONTEXT_JSON: undefined },
    }).then(
      () => undefined,
      (err: { stderr: string; code: number }) => err,
    );
    expect(failure).toBeDefined();
    for (const key of [
      "bedrockModelId",
      "bedrockEmbeddingModelId",
      "supabaseUrl",
      "supabaseSecretArn",
      "oidcIssuer",
      "oidcAudience",
    ] as const) {
      expect(failure!.stderr).toContain(`${key}: ${REQUIRED_SETTINGS[key]}`);
    }
    expect(failure!.stderr).toContain("-c demo=true");
    expect(failure!.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
  }, 60_000);

  it("names the Intercom admin when Intercom is turned on without one, and only then", () => {
    const { intercomAdminId: _admin, ...withoutIntercom } = PRODUCTION_CONTEXT;
    expect(() => readSettings(new App({ context: withoutIntercom }))).not.toThrow();
    expect(() => readSettings(new App({ context: { ...withoutIntercom, intercom: "true" } }))).toThrow(
      /intercomAdminId: the Intercom admin id/,
    );
  });

  it("refuses malformed values by name: a placeholder Supabase URL, a non-ARN secret, an ARN as model id", () => {
    const bad = (extra: Record<string, string>) => () =>
      readSettings(new App({ context: { ...PRODUCTION_CONTEXT, ...extra } }));
    expect(bad({ supabaseUrl: "https://your-project.supabase.co" })).toThrow(/supabaseUrl.*placeholder/);
    expect(bad({ supabaseUrl: "http://abc.supabase.co" })).toThrow(/supabaseUrl must be an https URL/);
    expect(bad({ supabaseSecretArn: "my-secret" })).toThrow(/supabaseSecretArn/);
    expect(bad({ bedrockModelId: "arn:aws:bedrock:us-east-1::foundation-model/x" })).toThrow(/bedrockModelId/);
    expect(bad({ bedrockRegion: "Virginia" })).toThrow(/bedrockRegion/);
    expect(bad({ demo: "yes" })).toThrow(/demo must be true or false/);
    expect(bad({ stage: "Prod_1" })).toThrow(/stage/);
    expect(bad({ memoryMinScore: "2" })).toThrow(/memoryMinScore/);
    expect(bad({ alarmEmail: "oncall" })).toThrow(/alarmEmail/);
    expect(bad({ userQuotas: '{"turnsPerMinute":0}' })).toThrow(/userQuotas: turnsPerMinute/);
    expect(bad({ userQuotas: "ten a minute" })).toThrow(/userQuotas: must be a JSON object/);
    expect(bad({ sessionRetentionDays: "0" })).toThrow(/sessionRetentionDays/);
  });
});

describe("a demo deployment (-c demo=true)", () => {
  const settings = readSettings(new App({ context: { demo: "true" } }));
  const template = synth("Demo", settings);

  it("synthesizes with nothing else, says so in a Demo output, and is reached with a generated API key", () => {
    expect(template.Outputs.Demo?.Value).toMatch(/offline rule-based model/);
    expect(template.Outputs.DemoApiKeyId).toBeDefined();
    const authorizer = ofType(template, "AWS::Lambda::Function").find(
      ([, f]) => f.Properties.Environment?.Variables?.USERS_API_KEY_SECRET_ARN,
    );
    expect(authorizer).toBeDefined();
  });

  it("deploys no Intercom webhook, worker or queue without Intercom's context", () => {
    expect(JSON.stringify(template.Resources)).not.toContain("Intercom");
    expect(JSON.stringify(template.Resources)).not.toContain("SupportWorker");
    expect(ofType(template, "AWS::SQS::Queue")).toHaveLength(8); // extraction, ingest, runs and webhooks, each with its DLQ
    expect(template.Outputs.IntercomWebhookUrl).toBeUndefined();
  });
});

describe("a production deployment", () => {
  const template = synth("AgentBackend", PRODUCTION_SETTINGS);

  // Both templates in one cfn-lint run: its start (the resource specs it loads) is most of its time.
  it("passes cfn-lint with zero errors, as configured and with the playground", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cfn-lint-"));
    const files = Object.entries({
      "AgentBackend.template.json": template,
      "AgentBackendPlayground.template.json": synth("AgentBackendPlayground", {
        ...PRODUCTION_SETTINGS,
        playground: true,
      }),
    }).map(([name, body]) => {
      writeFileSync(join(dir, name), JSON.stringify(body, null, 1));
      return join(dir, name);
    });
    // cfn-lint exits 0 clean, 2 on errors, 4 on warnings, 8 on informational findings (bit flags).
    const result = await run("cfn-lint", ["--format", "parseable", ...files]).then(
      (r) => ({ code: 0, out: r.stdout }),
      (err: { code: number | string; stdout: string; stderr: string }) => {
        if (err.code === "ENOENT") throw new Error("cfn-lint is not installed: `pip install cfn-lint` (.ci/run does)");
        return { code: Number(err.code), out: `${err.stdout}${err.stderr}` };
      },
    );
    const errors = result.out.split("\n").filter((line) => /:E\d{4}:/.test(line));
    expect(errors).toEqual([]);
    expect(result.code & 2).toBe(0);
  }, 120_000);

  it("gives the streaming method an integration timeout at least its function's", () => {
    const [, method] = ofType(template, "AWS::ApiGateway::Method").find(
      ([, m]) => m.Properties.Integration?.ResponseTransferMode === "STREAM",
    )!;
    const fnId = JSON.stringify(method.Properties.Integration.Uri).match(/"(ChatStreamFunction[A-F0-9]+)"/)![1]!;
    const fnTimeoutMs = template.Resources[fnId]!.Properties.Timeout * 1000;
    expect(method.Properties.Integration.TimeoutInMillis).toBeGreaterThanOrEqual(fnTimeoutMs);
    expect(method.Properties.Integration.TimeoutInMillis).toBeLessThanOrEqual(15 * 60 * 1000);
  });

  it("gives every alarm an action", () => {
    const alarms = ofType(template, "AWS::CloudWatch::Alarm");
    expect(alarms.length).toBeGreaterThan(20);
    for (const [id, alarm] of alarms) expect([id, alarm.Properties.AlarmActions?.length]).toEqual([id, 1]);
  });

  it("names the bucket, its prefix, each secret, the webhook URL, the alarm topic and the dashboard in outputs", () => {
    for (const output of [
      "DocumentsBucketName",
      "DocumentsPrefix",
      "SupabaseSecretName",
      "IntercomAccessTokenSecretName",
      "IntercomClientSecretName",
      "IntercomWebhookUrl",
      "AlarmTopicArn",
      "DashboardUrl",
    ])
      expect(template.Outputs[output], output).toBeDefined();
    expect(JSON.stringify(template.Outputs.IntercomWebhookUrl!.Value)).toContain("/webhooks/intercom");
    expect(template.Outputs.Demo).toBeUndefined();
  });

  it("calls Bedrock with the profile and its foundation model in every destination region, never '*'", () => {
    const policies = ofType(template, "AWS::IAM::Policy").flatMap(([, p]) => p.Properties.PolicyDocument.Statement);
    const bedrock = policies.filter((s: { Action: unknown }) => JSON.stringify(s.Action).includes("bedrock:"));
    expect(bedrock.length).toBeGreaterThan(0);
    const resources = JSON.stringify(bedrock.map((s: { Resource: unknown }) => s.Resource));
    expect(resources).toContain("inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0");
    for (const region of ["us-east-1", "us-east-2", "us-west-2"])
      expect(resources).toContain(`:bedrock:${region}::foundation-model/anthropic.claude-sonnet-4-5-20250929-v1:0`);
    expect(resources).not.toContain('"*"');
  });

  it("prefixes the stack's name, and so its resources', with the stage", () => {
    expect(stackName(undefined)).toBe("AgentBackend");
    expect(stackName("staging")).toBe("AgentBackend-staging");
    const staged = synth(stackName("staging"), PRODUCTION_SETTINGS);
    const [, api] = ofType(staged, "AWS::ApiGateway::RestApi")[0]!;
    expect(api.Properties.Name).toBe("AgentBackend-staging-api");
    const [, dashboard] = ofType(staged, "AWS::CloudWatch::Dashboard")[0]!;
    expect(dashboard.Properties.DashboardName).toBe("AgentBackend-staging");
  });

  it("hands the user quotas and the session retention to the functions from context", () => {
    const quotas = '{"turnsPerMinute":5,"tokensPerDay":100000}';
    const settings = readSettings(
      new App({ context: { ...PRODUCTION_CONTEXT, userQuotas: quotas, sessionRetentionDays: "30" } }),
    );
    const t = synth("Limited", settings);
    const [, chat] = ofType(t, "AWS::Lambda::Function").find(([id]) => id.startsWith("ChatFunction"))!;
    expect(chat.Properties.Environment.Variables).toMatchObject({ USER_QUOTAS: quotas, SESSION_RETENTION_DAYS: "30" });
  });

  it("hands the message cap and the memory thresholds to the functions from context", () => {
    const t = synth("Tuned", { ...PRODUCTION_SETTINGS, maxMessageBytes: 4096, memoryMinScore: 0.42 });
    const [, chat] = ofType(t, "AWS::Lambda::Function").find(([id]) => id.startsWith("ChatFunction"))!;
    expect(chat.Properties.Environment.Variables).toMatchObject({
      MAX_MESSAGE_BYTES: "4096",
      MEMORY_MIN_SCORE: "0.42",
      MEMORY_DUPLICATE_THRESHOLD: "0.9", // Titan's, since the context names none
    });
    const [, model] = ofType(t, "AWS::ApiGateway::Model")[0]!;
    expect(model.Properties.Schema.properties.message.maxLength).toBe(4096);
  });
});

describe("Bedrock model ARNs", () => {
  const arns = (id: string) =>
    bedrockModelArns(id, { partition: "aws", region: "ap-northeast-1", account: "123456789012" });
  const valid =
    /^arn:aws:bedrock:([a-z]{2}(-gov)?-[a-z]+-\d)?:(\d{12})?:(foundation-model|inference-profile)\/[a-z0-9.:-]+$/;

  it("grants a base model in the calling region only", () => {
    expect(arns("amazon.titan-embed-text-v2:0")).toEqual([
      "arn:aws:bedrock:ap-northeast-1::foundation-model/amazon.titan-embed-text-v2:0",
    ]);
  });

  it("grants a jp. profile and its model in Tokyo and Osaka, as valid ARNs", () => {
    const jp = arns("jp.anthropic.claude-sonnet-4-5-20250929-v1:0");
    expect(jp).toEqual([
      "arn:aws:bedrock:ap-northeast-1:123456789012:inference-profile/jp.anthropic.claude-sonnet-4-5-20250929-v1:0",
      "arn:aws:bedrock:ap-northeast-1::foundation-model/anthropic.claude-sonnet-4-5-20250929-v1:0",
      "arn:aws:bedrock:ap-northeast-3::foundation-model/anthropic.claude-sonnet-4-5-20250929-v1:0",
    ]);
    for (const arn of jp) expect(arn).toMatch(valid);
  });

  it("grants a global profile its model in the calling region and region-less, as Bedrock documents", () => {
    const global = arns("global.anthropic.claude-sonnet-4-5-20250929-v1:0");
    expect(global).toContain("arn:aws:bedrock:::foundation-model/anthropic.claude-sonnet-4-5-20250929-v1:0");
    expect(global).toContain(
      "arn:aws:bedrock:ap-northeast-1::foundation-model/anthropic.claude-sonnet-4-5-20250929-v1:0",
    );
    for (const arn of global) expect(arn).toMatch(valid);
  });

  it("keeps au., eu., apac. and us. profiles' models out of the id", () => {
    for (const prefix of ["au", "eu", "apac", "us"]) {
      const list = arns(`${prefix}.anthropic.claude-haiku-4-5-20251001-v1:0`);
      for (const arn of list.slice(1)) expect(arn).toMatch(/foundation-model\/anthropic\.claude-haiku/);
      for (const arn of list) expect(arn).toMatch(valid);
    }
  });

  it("signs Bedrock calls in bedrockRegion when it is set", () => {
    const t = synth("Elsewhere", {
      ...PRODUCTION_SETTINGS,
      bedrockRegion: "eu-central-1",
      bedrockModelId: "eu.anthropic.claude-sonnet-4-5-20250929-v1:0",
    });
    const resources = JSON.stringify(
      ofType(t, "AWS::IAM::Policy").flatMap(([, p]) => p.Properties.PolicyDocument.Statement),
    );
    expect(resources).toContain(":bedrock:eu-central-1:");
    const [, chat] = ofType(t, "AWS::Lambda::Function").find(([id]) => id.startsWith("ChatFunction"))!;
    expect(chat.Properties.Environment.Variables.BEDROCK_REGION).toBe("eu-central-1");
  });
});
