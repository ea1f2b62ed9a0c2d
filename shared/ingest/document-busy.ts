/**
 * Another delivery of the same content is processing the document: this one is retried later
 * (SQS brings it back), and is no failure. Apart from the ingestor, so the handler can tell it
 * without loading extraction at init.
 */
export class DocumentBusy extends Error {}
