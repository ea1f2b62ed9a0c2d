import { type BundlingOptions, DockerImage } from "aws-cdk-lib";
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../../..");

/**
 * CDK bundling that runs `node <args>` on this machine, from the repository root, for an asset
 * built here (a function's bundle, the playground's page). CDK wants a container for when local
 * bundling declines; ours never declines (it builds or fails loudly), so the image is never
 * pulled. The command mirrors the local build and keys CDK's asset cache, which would otherwise
 * take every asset for one bundling.
 */
export function localBundling(
  args: (outputDir: string) => string[],
  env: Record<string, string> = {},
): BundlingOptions {
  return {
    image: DockerImage.fromRegistry("public.ecr.aws/sam/build-nodejs22.x"),
    command: ["node", ...args("/asset-output")],
    local: {
      tryBundle(outputDir) {
        execFileSync(process.execPath, args(outputDir), {
          cwd: ROOT,
          env: { ...process.env, ...env },
          stdio: ["ignore", "inherit", "inherit"],
        });
        return true;
      },
    },
  };
}
