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
  /**
   * The records that name a user (`user_id`: owner records, runs, crons, thread and file records)
   * by user and sort key, keys only: how export and erasure find a user's sessions without reading
   * the table. A turn's writes change neither attribute, so they cost the index nothing.
   */
  userIndex: { name: "by-user", partitionKey: "user_id", sortKey: "sk" },
} as const;
