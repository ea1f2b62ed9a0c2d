// Defaults for running on this machine, set before any other module loads (imported first).
// Node 20 here, 22 in Lambda: the SDK's upgrade notice is known and only noise.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
// No CloudWatch locally: metrics stay off unless asked for (Powertools reads this at construction).
process.env.POWERTOOLS_METRICS_DISABLED ??= "true";
