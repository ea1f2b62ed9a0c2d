import { AssetHashType } from "aws-cdk-lib";
import { Code } from "aws-cdk-lib/aws-lambda";
import { relative, resolve } from "node:path";
import { localBundling } from "./local-bundling";
import type { NativeModule } from "./native";

const ROOT = resolve(import.meta.dirname, "../../..");

/**
 * A function's code asset, built by bundleFunction (build.ts) on this machine, as
 * NodejsFunction builds its assets, but with the trims its CLI-driven esbuild cannot run.
 * The asset hash is the bundle's, so an unchanged bundle is not uploaded again.
 */
export function functionCode(entry: string, options: { langsmith?: boolean; native?: NativeModule } = {}): Code {
  const args = (outdir: string) => [
    "--import",
    "tsx",
    "infra/aws/bundle/cli.ts",
    relative(ROOT, entry),
    outdir,
    ...(options.langsmith ? ["--langsmith"] : []),
    ...(options.native ? [`--native=${options.native}`] : []),
  ];
  return Code.fromAsset(ROOT, { assetHashType: AssetHashType.OUTPUT, bundling: localBundling(args) });
}
