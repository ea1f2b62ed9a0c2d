import { Logger } from "@aws-lambda-powertools/logger";
import "./source-maps";

export type { Logger };

/** Structured JSON logs (Powertools); each handler appends request, session and message ids. */
export function createLogger(serviceName: string): Logger {
  return new Logger({ serviceName, logLevel: (process.env.LOG_LEVEL as "INFO") ?? "INFO" });
}
