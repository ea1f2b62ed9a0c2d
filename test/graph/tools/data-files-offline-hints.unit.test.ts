import { describeDataFileTool, queryDataTool, type DataFileDeps } from "../../../graph/tools/data-files";
import { OFFLINE_HINT, type OfflineHint } from "../../../shared/models/offline-rules";

// How the offline stand-in (not a language model) decides to describe a data file: from the
// message's text, on the stack's event loop, so the patterns must read a message in one pass.

const hint = describeDataFileTool({} as DataFileDeps).metadata![OFFLINE_HINT] as OfflineHint;
const trigger = hint.trigger as RegExp;
const fileNamed = (text: string) => (trigger.test(text) ? hint.args!(text).file : undefined);

it("describes the file a question about its contents names", () => {
  expect(fileNamed("what columns does sales.csv have?")).toBe("sales.csv");
  expect(fileNamed("show the rows of my.data-v2.parquet")).toBe("my.data-v2.parquet");
  expect(fileNamed("the schema of (q1.tsv) please")).toBe("q1.tsv");
  expect(fileNamed("what is in sales.csvx")).toBeUndefined();
  expect(fileNamed("tell me about sales.csv")).toBeUndefined(); // names a file, asks nothing of its contents
});

// A name was tried from every position of a run of name characters: a 16 KB message of letters
// held the event loop 300 ms (twenty at once pushed /health to 2.3 s); this size would take minutes.
it.each([
  ["letters", "a".repeat(200_000)],
  ["dots", ".".repeat(200_000)],
  ["near-names", "a.csva".repeat(33_000)],
])("reads a 200 KB message of %s in one pass", (_shape, text) => {
  expect(trigger.test(`${text} columns`)).toBe(false);
  expect((hint.declines!.trigger as RegExp).test(text)).toBe(false);
});

// A result cut to fit the context (graph/chat/context-window.ts) is no longer JSON: the stand-in
// read it as a description and answered "undefined (table undefined) has 0 columns".
it("relays a result that was cut to fit the context as the text it is", () => {
  const cut =
    '{"success":true,"columns":[{"name":"c","type":"VARCHAR"}],"rows":[{"c":"x…\n[cut here: the whole result is 9000 tokens, more than the 2000 this turn can show; ask for less of it]';
  for (const tool of [describeDataFileTool, queryDataTool]) {
    const relay = (tool({} as DataFileDeps).metadata![OFFLINE_HINT] as OfflineHint).relays!;
    expect(relay({ text: cut })).toBe(cut);
  }
});
