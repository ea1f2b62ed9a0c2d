/**
 * The checkpoint table's physical layout. The CDK stack and `createCheckpointTable`
 * both read these names, so the deployed table and the local one cannot drift.
 */
export const CHECKPOINT_TABLE = {
  partitionKey: "pk",
  sortKey: "sk",
  ttlAttribute: "expires_at",
} as const;
