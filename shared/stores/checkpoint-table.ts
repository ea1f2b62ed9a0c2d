/**
 * The checkpoint table's physical layout. The CDK stack, `createCheckpointTable`, the saver
 * and the stores that keep records in a thread's partition (owner, lease) all read these names,
 * so the deployed table and the local one cannot drift. It lives in shared/ so the stores need
 * not import the graph layer.
 */
export const CHECKPOINT_TABLE = {
  partitionKey: "pk",
  sortKey: "sk",
  ttlAttribute: "expires_at",
} as const;
