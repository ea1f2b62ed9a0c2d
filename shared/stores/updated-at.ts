/**
 * Now, or a millisecond after `previous` when now is not later. An item written on the condition
 * that its updated_at is as read uses it as its version, so every write must move it forward.
 */
export const laterThan = (previous: string) => new Date(Math.max(Date.now(), Date.parse(previous) + 1)).toISOString();
