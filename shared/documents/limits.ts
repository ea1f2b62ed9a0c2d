import { SkipDocument } from "./skip";

/**
 * What one document may make extraction and chunking do. A small file can inflate to gigabytes
 * (a zip bomb), render to millions of characters or split into hundreds of thousands of chunks:
 * size on disk bounds none of that, so each is bounded where it happens.
 */
export interface DocumentLimits {
  /** longest extracted text, in characters */
  maxTextChars: number;
  /** most bytes a DOCX's zip entries may inflate to, all entries together */
  maxUnzippedBytes: number;
  maxPdfPages: number;
  maxChunks: number;
  /** epoch milliseconds past which the document's processing is given up */
  deadline: number;
  /** the time bound the deadline came from, for the reason */
  timeoutMs: number;
}

/** A zip with more entries than this is not a document: DOCX files hold a few dozen. */
export const MAX_ZIP_ENTRIES = 2000;

/** A document over one of its bounds: skipped with this reason, never retried. */
export class OverLimit extends SkipDocument {}
/** Past the deadline: says how long processing took this time, not what the content is. */
export class TimedOut extends OverLimit {}

export const timedOut = (limits: Pick<DocumentLimits, "timeoutMs">) =>
  new TimedOut(`processing took longer than ${limits.timeoutMs} ms`);

export function checkDeadline(limits: Pick<DocumentLimits, "deadline" | "timeoutMs">): void {
  if (Date.now() > limits.deadline) throw timedOut(limits);
}

export function checkTextLength(length: number, limits: DocumentLimits): void {
  if (length > limits.maxTextChars) throw new OverLimit(`its text is over the ${limits.maxTextChars}-character limit`);
}
