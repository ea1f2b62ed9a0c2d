import { DescribeTableCommand } from "@aws-sdk/client-dynamodb";
import { apiHandler } from "../shared/api-handler";
import type { Backends } from "../shared/backends";
import { json } from "../shared/http";
import { createLogger } from "../shared/logger";
import type { RouteSchemas } from "../shared/request-schemas";
import { awsWiring, type Wiring } from "../shared/wiring";

const logger = createLogger("health");

/** A check that has not answered by then counts as failed: a health check must not hang. */
export const CHECK_TIMEOUT_MS = 3000;

interface Check {
  ok: boolean;
  ms: number;
  error?: string;
}

async function timed(run: () => Promise<unknown>): Promise<Check> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      run(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
      }),
    ]);
    return { ok: true, ms: Date.now() - started };
  } catch (err) {
    return { ok: false, ms: Date.now() - started, error: (err as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * GET /api/health/deep: whether this deployment reaches its state (the DynamoDB checkpoint table)
 * and Supabase, each with its latency. 200 when every configured backend answers, else 503 naming
 * the one that did not; a deployment without Supabase reports it as not configured.
 */
export function createHealthHandler(backends: () => Promise<Backends>, corsOrigins?: () => string | undefined) {
  return apiHandler(
    logger,
    async () => {
      const { config, dynamo, store } = await backends();
      const [dynamodb, supabase] = await Promise.all([
        timed(() => dynamo.send(new DescribeTableCommand({ TableName: config.CHECKPOINT_TABLE }))),
        store ? timed(() => store.ping()) : Promise.resolve(undefined),
      ]);
      const checks = { dynamodb, supabase: supabase ?? "not configured" };
      const healthy = dynamodb.ok && (supabase?.ok ?? true);
      if (!healthy) logger.warn("health check failed", { checks });
      return json(healthy ? 200 : 503, { status: healthy ? "ok" : "unavailable", checks });
    },
    { corsOrigins },
  );
}

/** The route takes nothing from its request (shared/request-schemas.ts). */
export const requestSchemas: RouteSchemas = { "GET /api/health/deep": {} };

/** The handler on any wiring: Lambda's below, or the local stack's. */
export const createHandler = ({ config, backends }: Wiring) =>
  createHealthHandler(backends, () => config().CORS_ORIGINS);

export const handler = createHandler(awsWiring());
export { loadDeferred } from "../shared/deferred";
