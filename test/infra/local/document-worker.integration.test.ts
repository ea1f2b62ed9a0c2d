import { workerDocumentProcessor } from "../../../infra/local/document-worker";
import { DEFAULT_LIMITS } from "../../../shared/documents/extract-text";
import { OverLimit } from "../../../shared/documents/limits";
import { processDocument, type ProcessRequest } from "../../../shared/documents/process";
import { SkipDocument } from "../../../shared/documents/skip";

// The local stack extracts and chunks documents on a worker thread, so a large
// document cannot stall its API, and the worker enforces the time and memory a document may take.

const encode = (s: string) => new TextEncoder().encode(s);
const request = (key: string, text: string, timeoutMs = 60_000): ProcessRequest => ({
  key,
  body: encode(text),
  limits: { ...DEFAULT_LIMITS, timeoutMs, deadline: Date.now() + timeoutMs },
  chunking: { chunkSize: 1000, chunkOverlap: 150 },
});
// ~3 MB of HTML: converting it is one long synchronous call, the kind that stalls a server.
const bigHtml = `<html><body>${"<p>Refunds are processed within <b>five</b> working days.</p>".repeat(50_000)}</body></html>`;

/** How many turns the main event loop makes while `work` runs: none means it was blocked throughout. */
async function loopTurnsDuring(work: Promise<unknown>): Promise<number> {
  let turns = 0;
  let done = false;
  const spin = () => {
    if (done) return;
    turns++;
    setImmediate(spin);
  };
  setImmediate(spin);
  await work.finally(() => (done = true));
  return turns;
}

let worker: ReturnType<typeof workerDocumentProcessor>;
beforeAll(() => {
  worker = workerDocumentProcessor({ memoryMb: 256 });
});
afterAll(() => worker.close());

describe("the local document worker", () => {
  it("extracts and chunks on another thread, leaving the main event loop free", async () => {
    const work = worker(request("big.html", bigHtml));
    const turns = await loopTurnsDuring(work);
    const chunks = await work;
    expect(chunks.length).toBeGreaterThan(100);
    expect(chunks[0]!.content).toContain("Refunds are processed within five working days.");
    expect(turns).toBeGreaterThan(10);
  });

  it("in this thread, the same document blocks the event loop throughout (why the worker exists)", async () => {
    expect(await loopTurnsDuring(processDocument(request("big.html", bigHtml)))).toBe(0);
  });

  it("passes skips back with their reason", async () => {
    const failure = await worker(request("noise.txt", "bad\u0000bytes")).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(SkipDocument);
    expect((failure as Error).message).toMatch(/NUL/);
  });

  it("stops a document past its time bound, and the next one still runs", async () => {
    const failure = await worker(request("slow.html", bigHtml.repeat(3), 300)).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(OverLimit);
    expect((failure as Error).message).toMatch(/300 ms/);
    expect(await worker(request("next.md", "# Next\nStill works."))).toHaveLength(1);
  });

  it("stops a document that needs more memory than the worker has, and the next one still runs", async () => {
    const small = workerDocumentProcessor({ memoryMb: 32 });
    try {
      // A JSON of a million short strings: the parsed tree and the text outgrow 32 MB.
      const json = JSON.stringify(Array.from({ length: 1_000_000 }, (_, i) => `value number ${i}`));
      const failure = await small(request("huge.json", json)).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(OverLimit);
      expect((failure as Error).message).toMatch(/memory/);
      expect(await small(request("after.md", "# After\nStill works."))).toHaveLength(1);
    } finally {
      await small.close();
    }
  });
});
