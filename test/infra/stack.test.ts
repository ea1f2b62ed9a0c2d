import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { CHECKPOINT_TABLE } from "../../graph/checkpoint";
import { AgentStack } from "../../infra/aws/stack";

const template = Template.fromStack(new AgentStack(new App(), "Test"));

describe("checkpoint table", () => {
  it("uses the saver's key schema, on-demand billing, TTL and point-in-time recovery", () => {
    template.hasResourceProperties("AWS::DynamoDB::GlobalTable", {
      KeySchema: [
        { AttributeName: CHECKPOINT_TABLE.partitionKey, KeyType: "HASH" },
        { AttributeName: CHECKPOINT_TABLE.sortKey, KeyType: "RANGE" },
      ],
      BillingMode: "PAY_PER_REQUEST",
      TimeToLiveSpecification: { AttributeName: CHECKPOINT_TABLE.ttlAttribute, Enabled: true },
      Replicas: [
        { PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true }, DeletionProtectionEnabled: true },
      ],
    });
  });

  it("is kept when the stack is deleted", () => {
    template.hasResource("AWS::DynamoDB::GlobalTable", { DeletionPolicy: "Retain", UpdateReplacePolicy: "Retain" });
  });
});
