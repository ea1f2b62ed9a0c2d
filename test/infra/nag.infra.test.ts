import { App } from "aws-cdk-lib";
import { AwsSolutionsChecks } from "cdk-nag";
import { AgentStack } from "../../infra/aws/stack";
import type { StackSettings } from "../../infra/aws/settings";
import { PRODUCTION_SETTINGS } from "../support/deployment";

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
        ...PRODUCTION_SETTINGS,
        bedrockModelId: "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
        bedrockRegion: "eu-west-1",
        documentsPrefix: "docs/",
        tracing: true,
        stage: "staging",
        apiKeys: [
          { client: "billing", trusted: true },
          { client: "reports", trusted: false },
        ],
        queueConcurrency: 20,
      }),
    ).toEqual([]);
  });

  it("finds nothing unacknowledged in a production deployment with the defaults", () => {
    expect(findings(PRODUCTION_SETTINGS)).toEqual([]);
  });

  it("finds nothing unacknowledged in a demo", () => {
    expect(findings({ demo: true, documentsPrefix: "knowledge/" })).toEqual([]);
  });
});
