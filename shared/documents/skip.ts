/**
 * A document that will never be ingested as it is (its type, size, content or bounds): logged
 * and recorded as skipped with this message as the reason, and not retried. Each cause is a
 * subclass; a worker thread that cannot pass classes back rebuilds this one from its reason.
 */
export class SkipDocument extends Error {}
