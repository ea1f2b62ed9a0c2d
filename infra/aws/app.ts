import { App, Validations } from "aws-cdk-lib";
import { AwsSolutionsChecks } from "cdk-nag";
import { AgentStack } from "./stack";

const app = new App();
// No env: the template is account- and region-agnostic, so `cdk synth` runs offline.
new AgentStack(app, "AgentBackend");
// Synthesis fails on any AwsSolutions finding the stack does not acknowledge (infra/aws/nag.ts).
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
