import { Logger } from "@aws-lambda-powertools/logger";
import { withSourceMappedStack } from "./source-maps";

export type { Logger };

/**
 * Structured JSON logs (Powertools); each handler appends request, session and message ids. An
 * error's stack is logged in source positions (shared/source-maps.ts).
 */
export function createLogger(serviceName: string): Logger {
  return new Logger({
    serviceName,
    logLevel: (process.env.LOG_LEVEL as "INFO") ?? "INFO",
    jsonReplacerFn: (_key, value) => (value instanceof Error ? withSourceMappedStack(value) : value),
  });
}
