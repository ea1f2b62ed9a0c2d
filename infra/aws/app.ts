import { App, Validations } from "aws-cdk-lib";
import { AwsSolutionsChecks } from "cdk-nag";
import { widthMismatch } from "../supabase/embedding-width";
import { readSettings, SettingsError, type StackSettings } from "./settings";
import { AgentStack, stackName } from "./stack";

const app = new App();
let settings: StackSettings;
try {
  settings = readSettings(app);
  const mismatch = widthMismatch(settings.embeddingDimension);
  if (mismatch) throw new SettingsError(mismatch);
} catch (err) {
  // A missing or malformed setting is the deployer's to fix: say what, without a stack trace.
  if (!(err instanceof SettingsError)) throw err;
  console.error(`\n${err.message}\n`);
  process.exit(1);
}
// No env: the template is account- and region-agnostic, so `cdk synth` runs offline.
new AgentStack(app, stackName(settings.stage), { settings });
// Synthesis fails on any AwsSolutions finding the stack does not acknowledge (infra/aws/nag.ts).
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
