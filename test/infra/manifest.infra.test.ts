import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { constructId, FUNCTIONS, queueSettings, type QueueName } from "../../infra/manifest";
import { PRODUCTION_SETTINGS } from "../support/deployment";
import { synthesized } from "../support/synth";

type Resources = Record<string, { Type: string; Properties: Record<string, any> }>;

let local: LocalStack;
beforeAll(async () => {
  local = await startLocalStack({ DATA_DIR: mkdtempSync(join(tmpdir(), "manifest-")), PORT: "0" });
}, 60_000);
afterAll(() => local?.close());

const { stack, template } = synthesized(PRODUCTION_SETTINGS);
const resources = template.toJSON().Resources as Resources;
const nameOf = (logicalId: string) => FUNCTIONS.find((f) => logicalId.startsWith(constructId(f.name)))?.name;

/** An API Gateway resource's path, from its PathPart and its parents'. */
function pathOf(resourceRef: unknown): string {
  const id = (resourceRef as { Ref?: string }).Ref;
  if (!id) return ""; // the root resource (Fn::GetAtt RootResourceId)
  const r = resources[id]!.Properties;
  return `${pathOf(r.ParentId)}/${r.PathPart}`;
}

/** Every route the synthesized API serves: function, method, path and the function's timeout. */
function awsRoutes() {
  return Object.values(resources)
    .filter((r) => r.Type === "AWS::ApiGateway::Method")
    .map((m) => {
      const fnId = JSON.stringify(m.Properties.Integration.Uri).match(/"Fn::GetAtt":\["(\w+)","Arn"\]/)![1]!;
      return {
        name: nameOf(fnId),
        method: m.Properties.HttpMethod,
        resource: pathOf(m.Properties.ResourceId),
        timeoutMs: resources[fnId]!.Properties.Timeout * 1000,
      };
    });
}

const sorted = <T>(rows: T[]) => rows.map((r) => JSON.stringify(r)).sort();

describe("the deployment manifest", () => {
  it("gives the local stack and the synthesized stack the same routes, functions and timeouts", () => {
    expect(sorted(local.routes)).toEqual(sorted(awsRoutes()));
    // and every API function of the manifest is routed
    const routed = new Set(local.routes.map((r) => r.name));
    for (const fn of FUNCTIONS.filter((f) => f.kind === "api")) expect(routed.has(fn.name)).toBe(true);
  });

  it("gives both the same queues: visibility timeout, receives before the dead-letter queue, batch size, consumer timeout", () => {
    const localQueues: Record<QueueName, (typeof local.queues)["extraction"]> = {
      extraction: local.queues.extraction,
      ingest: local.queues.ingest,
      support: local.queues.support,
      runs: local.queues.runs,
      webhooks: local.queues.webhooks,
    };
    const queueIds: Record<QueueName, () => unknown> = {
      extraction: () => stack.extractionQueue,
      ingest: () => stack.ingestQueue,
      support: () => stack.supportQueue,
      runs: () => stack.runsQueue,
      webhooks: () => stack.webhooksQueue,
    };
    for (const name of ["extraction", "ingest", "support", "runs", "webhooks"] as const) {
      const q = queueIds[name]() as { node: { defaultChild: unknown } };
      const aws = resources[stack.getLogicalId(q.node.defaultChild as never)]!.Properties;
      const mapping = Object.values(resources).find(
        (r) =>
          r.Type === "AWS::Lambda::EventSourceMapping" &&
          JSON.stringify(r.Properties.EventSourceArn).includes(stack.getLogicalId(q.node.defaultChild as never)),
      )!.Properties;
      const consumerId = (mapping.FunctionName as { Ref: string }).Ref;
      const awsView = {
        visibilityTimeoutMs: aws.VisibilityTimeout * 1000,
        maxReceives: aws.RedrivePolicy.maxReceiveCount,
        batchSize: mapping.BatchSize,
        consumerTimeoutMs: resources[consumerId]!.Properties.Timeout * 1000,
      };
      const l = localQueues[name];
      const localView = {
        visibilityTimeoutMs: l.visibilityTimeoutMs,
        maxReceives: l.maxReceiveCount,
        batchSize: l.batchSize,
        consumerTimeoutMs: l.functionTimeoutMs,
      };
      expect(localView).toEqual(awsView);
      expect(awsView.visibilityTimeoutMs).toBe(queueSettings(name).visibilityTimeoutSeconds * 1000);
    }
  });
});
