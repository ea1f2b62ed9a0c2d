import { App } from "aws-cdk-lib";
import { AwsSolutionsChecks } from "cdk-nag";
import { AgentStack } from "../../infra/aws/stack";
import type { StackSettings } from "../../infra/aws/settings";

// cdk-nag's AwsSolutions pack over the synthesized stack: no finding may remain that the stack
// does not acknowledge with a reason (infra/aws/nag.ts).
const findings = (settings: StackSettings) => {
  const app = new App({ context: { "aws:cdk:bundling-stacks": [] } });
  const stack = new AgentStack(app, "Nag", { settings });
  return new AwsSolutionsChecks(app)
    .validateScope(stack)
    .violations.map((v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.resourceLogicalId).join(", ")}`);
};

describe("cdk-nag AwsSolutions", () => {
  it("finds nothing unacknowledged with every option set", () => {
    expect(
      findings({
        supabaseUrl: "https://abc.supabase.co",
        bedrockModelId: "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        bedrockEmbeddingModelId: "amazon.titan-embed-text-v2:0",
        documentsPrefix: "docs/",
        oidcIssuer: "https://auth.example.com/",
        oidcAudience: "api",
        intercomAdminId: "1",
        tracing: true,
        apiKeys: [
          { client: "billing", trusted: true },
          { client: "reports", trusted: false },
        ],
        queueConcurrency: 20,
      }),
    ).toEqual([]);
  });

  it("finds nothing unacknowledged with the defaults", () => {
    expect(findings({ supabaseUrl: "https://abc.supabase.co", documentsPrefix: "knowledge/" })).toEqual([]);
  });
});
