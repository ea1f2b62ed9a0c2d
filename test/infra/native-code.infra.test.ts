import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import type { Function as LambdaFunction } from "aws-cdk-lib/aws-lambda";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { architectureOf } from "../../infra/aws/bundle/native";
import { AgentStack } from "../../infra/aws/stack";
import { deployedFunctions } from "../../infra/manifest";
import { bundled } from "../support/bundles";
import { NO_BUNDLING, PRODUCTION_SETTINGS } from "../support/deployment";

/**
 * Where native code runs, read from the synthesized template and the bundles the stack deploys:
 * DuckDB only in the data function, on the architecture of its binding, with a role that reads
 * attachments and nothing else; every other function on Graviton without native code.
 */
const stack = new AgentStack(new App({ context: NO_BUNDLING }), "Native", {
  settings: { ...PRODUCTION_SETTINGS, intercom: undefined },
});
const template = Template.fromStack(stack);
const specs = deployedFunctions({ intercom: false });
const propsOf = (fn: LambdaFunction) =>
  template.toJSON().Resources[stack.getLogicalId(fn.node.defaultChild as never)].Properties as Record<string, any>;

/** Every statement of a function's role: its inline policies. */
function statementsOf(fn: LambdaFunction) {
  const roleRef = stack.resolve((fn.role!.node.defaultChild as unknown as { ref: string }).ref);
  const policies = template.findResources("AWS::IAM::Policy", { Properties: { Roles: [roleRef] } });
  return Object.values(policies).flatMap((p) => p.Properties.PolicyDocument.Statement) as {
    Action: string | string[];
    Resource: unknown;
  }[];
}
const actionsOf = (fn: LambdaFunction) => statementsOf(fn).flatMap((s) => [s.Action].flat());

describe("native code in the stack", () => {
  it("ships DuckDB in the data function alone, on x86_64 for its Linux x64 binding; every other function on arm64", () => {
    const shipping = specs.filter((f) => f.native).map((f) => [f.name, f.native, architectureOf(f.native)]);
    expect(shipping).toEqual([["data", "duckdb", "x64"]]);
    for (const spec of specs) {
      const fn = stack.functions.get(spec.name)!;
      expect([spec.name, propsOf(fn).Architectures]).toEqual([spec.name, [spec.name === "data" ? "x86_64" : "arm64"]]);
    }
  });

  it("gives the data function a role that reads attachments under users/ and nothing else", () => {
    const data = stack.functions.get("data")!;
    const statements = statementsOf(data).filter((s) => ![s.Action].flat().every((a) => a.startsWith("xray:")));
    expect(statements.map((s) => s.Action)).toEqual(["s3:GetObject"]);
    expect(JSON.stringify(statements[0]!.Resource)).toContain("/users/*");
    // Nothing of the rest in its environment either: no table, secret, model or queue named.
    expect(Object.keys(propsOf(data).Environment.Variables)).toEqual(["ATTACHMENTS_BUCKET"]);
    // Invoked only: no route, no queue, no bucket notification.
    expect(specs.find((f) => f.name === "data")).toMatchObject({ kind: "engine" });
    expect(JSON.stringify(template.findResources("AWS::Lambda::Permission"))).not.toContain(
      stack.getLogicalId(data.node.defaultChild as never),
    );
  });

  it("lets exactly the functions that read data files invoke it, naming it in their environment", () => {
    const invoking = specs
      .filter((f) => actionsOf(stack.functions.get(f.name)!).includes("lambda:InvokeFunction"))
      .map((f) => f.name);
    // The chat graph's turns and runs, whichever way in, and the upload check.
    expect(invoking.sort()).toEqual([
      "agent-server",
      "agent-server-stream",
      "chat",
      "chat-stream",
      "file-uploaded",
      "files",
      "run-worker",
    ]);
    for (const name of invoking)
      expect(propsOf(stack.functions.get(name)!).Environment.Variables.DATA_FUNCTION_NAME).toEqual(
        stack.resolve(stack.functions.get("data")!.functionName),
      );
  });
});

describe("the bundles the stack deploys", () => {
  const build = (name: string) => bundled(name, specs.find((f) => f.name === name)!.native);
  const files = (dir: string) =>
    readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => statSync(join(dir, f)).isFile());
  const megabytes = (dir: string) => files(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0) / 2 ** 20;

  it.each(["chat", "chat-stream", "agent-server", "agent-server-stream"])(
    "%s: no native code, under 10 MB",
    async (name) => {
      const outdir = await build(name);
      expect(files(outdir).filter((f) => f.endsWith(".node") || f.startsWith("node_modules"))).toEqual([]);
      expect(megabytes(outdir)).toBeLessThan(10);
    },
    180_000,
  );

  it("data: DuckDB's Linux x64 binding and nothing for another platform", async () => {
    const binaries = files(await build("data")).filter((f) => f.endsWith(".node"));
    expect(binaries.length).toBeGreaterThan(0);
    for (const f of binaries) expect(f).toMatch(/node-bindings-linux-x64/);
  }, 180_000);
});
