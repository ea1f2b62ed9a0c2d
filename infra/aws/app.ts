import { App } from "aws-cdk-lib";
import { AgentStack } from "./stack";

const app = new App();
// No env: the template is account- and region-agnostic, so `cdk synth` runs offline.
new AgentStack(app, "AgentBackend");
