import { install } from "source-map-support";

/**
 * Stack traces in the bundle's source positions, resolved only when a trace is formatted.
 *
 * Node's --enable-source-maps parses the bundle's whole map at load, on every cold start (a
 * quarter of chat's init in the cold-start bench). source-map-support hooks stack formatting
 * instead: the map is read the first time an error's stack is printed, so cold starts without
 * an error pay nothing for it. Only in Lambda: tsx and vitest map their own stacks.
 */
if (process.env.AWS_LAMBDA_FUNCTION_NAME !== undefined) {
  install({ environment: "node", handleUncaughtExceptions: false });
}
