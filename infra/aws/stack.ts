import { RemovalPolicy, Stack, type StackProps } from "aws-cdk-lib";
import { AttributeType, Billing, TableV2 } from "aws-cdk-lib/aws-dynamodb";
import type { Construct } from "constructs";
import { CHECKPOINT_TABLE } from "../../graph/checkpoint/schema";

/** The agent backend. Grows resource by resource with the functions that use them. */
export class AgentStack extends Stack {
  readonly checkpointTable: TableV2;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);

    // Graph state: one item per checkpoint, write and stored message (graph/checkpoint).
    // On-demand billing because chat traffic is spiky; PITR because a thread's state
    // is user data; TTL so abandoned threads age out.
    this.checkpointTable = new TableV2(this, "CheckpointTable", {
      partitionKey: { name: CHECKPOINT_TABLE.partitionKey, type: AttributeType.STRING },
      sortKey: { name: CHECKPOINT_TABLE.sortKey, type: AttributeType.STRING },
      billing: Billing.onDemand(),
      timeToLiveAttribute: CHECKPOINT_TABLE.ttlAttribute,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }
}
