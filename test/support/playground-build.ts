import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");

/** Builds the playground into infra/local/playground/dist, as `npm start` does before it starts. */
export async function buildPlayground(): Promise<void> {
  // Vite takes production or development from NODE_ENV, which vitest sets to "test": without this
  // the page would be React's development build, not the one `npm start` serves.
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = "production";
  try {
    const { build } = await import("vite");
    await build({ configFile: join(ROOT, "infra/local/playground/vite.config.ts"), logLevel: "error" });
  } finally {
    process.env.NODE_ENV = nodeEnv;
  }
}
