import { AssetHashType, DockerImage } from "aws-cdk-lib";
import { Code } from "aws-cdk-lib/aws-lambda";
import { execFileSync } from "node:child_process";
import { relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../../..");

/**
 * A function's code asset, built by bundleFunction (build.ts) on this machine, as
 * NodejsFunction builds its assets, but with the trims its CLI-driven esbuild cannot run.
 * The asset hash is the bundle's, so an unchanged bundle is not uploaded again.
 */
export function functionCode(entry: string, options: { langsmith?: boolean } = {}): Code {
  const args = (outdir: string) => [
    "--import",
    "tsx",
    "infra/aws/bundle/cli.ts",
    relative(ROOT, entry),
    outdir,
    ...(options.langsmith ? ["--langsmith"] : []),
  ];
  return Code.fromAsset(ROOT, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // CDK wants a container for when local bundling declines; ours never declines (it bundles
      // or fails loudly), so the image is never pulled. The command mirrors the local build and
      // keys CDK's asset cache, which would otherwise take all functions for one bundling.
      image: DockerImage.fromRegistry("public.ecr.aws/sam/build-nodejs22.x"),
      command: ["node", ...args("/asset-output")],
      local: {
        tryBundle(outputDir) {
          execFileSync(process.execPath, args(outputDir), { cwd: ROOT, stdio: ["ignore", "inherit", "inherit"] });
          return true;
        },
      },
    },
  });
}
