import { z } from "zod";

/**
 * Every setting, in one place, read from the environment and validated at startup.
 * A bad or missing value fails with the setting's name, not deep inside a request.
 */
const Settings = z.object({
  /** DynamoDB table holding graph checkpoints. */
  CHECKPOINT_TABLE: z.string().min(3).max(255).default("agent-checkpoints"),
  /** Days after its last use a thread's checkpoints expire; unset keeps them. */
  CHECKPOINT_TTL_DAYS: z.coerce.number().positive().optional(),
  /** Local stack only: HTTP port and where state persists. */
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  DATA_DIR: z.string().min(1).default(".local"),
});

export type Config = z.infer<typeof Settings>;

export class ConfigError extends Error {}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // Empty strings count as unset, so `FOO= npm start` falls back to the default.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = Settings.safeParse(cleaned);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`Invalid configuration: ${problems.join("; ")}`);
  }
  return parsed.data;
}
