import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import type { StackSettings } from "../../infra/aws/settings";
import { AgentStack } from "../../infra/aws/stack";
import { NO_BUNDLING } from "./deployment";

const made = new Map<string, { stack: AgentStack; template: Template }>();

/**
 * A deployment's stack and its template, unbundled (only the template is read), made once a
 * worker for each stack id and settings: the infra tier's files share a worker's module graph
 * (vitest.config.ts), so the production deployment several files check is synthesized once.
 * Treat both as read-only.
 */
export function synthesized(settings: StackSettings, id = "AgentBackend") {
  const key = JSON.stringify([id, settings]);
  let done = made.get(key);
  if (!done) {
    const stack = new AgentStack(new App({ context: NO_BUNDLING }), id, { settings });
    done = { stack, template: Template.fromStack(stack) };
    made.set(key, done);
  }
  return done;
}
