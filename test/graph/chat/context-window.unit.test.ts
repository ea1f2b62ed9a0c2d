import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { contextWindow } from "../../../graph/chat/context";
import { fitTurns, stablePrefixEnd, STUB_MIN_TOKENS, turns } from "../../../graph/chat/context-window";
import { messagesTokens } from "../../../shared/models/token-estimate";

let n = 0;
const id = () => `m${++n}`;
const human = (text: string) => new HumanMessage({ id: id(), content: text });
const reply = (text: string) => new AIMessage({ id: id(), content: text });
const call = (name: string) =>
  new AIMessage({
    id: id(),
    content: "",
    tool_calls: [{ id: `c${n}`, name, args: { query: "q" }, type: "tool_call" }],
  });
const result = (ai: AIMessage, text: string) =>
  new ToolMessage({ id: id(), tool_call_id: ai.tool_calls![0]!.id!, name: ai.tool_calls![0]!.name, content: text });

/** A knowledge turn: question, tool call, a large result, answer. */
function knowledgeTurn(i: number): BaseMessage[] {
  const c = call("search_knowledge_base");
  return [human(`question ${i}?`), c, result(c, `passage ${i} `.repeat(400)), reply(`answer ${i}`)];
}

describe("fitting a conversation to a budget", () => {
  const history = [
    ...knowledgeTurn(1),
    human("hello"),
    reply("hi"),
    ...knowledgeTurn(2),
    human("tell me more"),
    reply("sure ".repeat(50)),
    ...knowledgeTurn(3),
  ];

  it("splits into turns at each human message", () => {
    expect(turns(history).map((t) => t.length)).toEqual([4, 2, 4, 2, 4]);
  });

  it("keeps whole turns, newest first, and never separates a tool call from its result", () => {
    for (const budget of [50, 200, 400, 800, 1600, 100_000]) {
      const { window, dropped, tokens } = fitTurns(history, budget);
      expect(window[0]!.getType()).toBe("human");
      expect([...dropped, ...window].map((m) => m.id)).toEqual(history.map((m) => m.id));
      for (const m of window) {
        for (const c of (m as AIMessage).tool_calls ?? []) {
          expect(window.some((r) => (r as ToolMessage).tool_call_id === c.id)).toBe(true);
        }
      }
      // Only the current turn may be over the budget on its own.
      if (window.length > 4) expect(tokens).toBeLessThanOrEqual(budget);
      expect(window.slice(-4).map((m) => m.id)).toEqual(history.slice(-4).map((m) => m.id));
    }
  });

  it("stubs large tool results of earlier turns only, naming the tool", () => {
    const { window } = fitTurns(history, 100_000);
    const results = window.filter((m) => m.getType() === "tool") as ToolMessage[];
    expect(results).toHaveLength(3);
    for (const stub of results.slice(0, 2)) {
      expect(stub.content).toMatch(/^\[earlier result of search_knowledge_base, \d+ tokens, elided/);
      expect(messagesTokens([stub])).toBeLessThan(STUB_MIN_TOKENS);
    }
    expect(results[2]!.content).toBe(history.at(-2)!.content);
    // Deterministic: the same history gives the same input (prompt caching depends on it).
    expect(fitTurns(history, 100_000).window.map((m) => m.content)).toEqual(window.map((m) => m.content));
  });

  // A data query's 60 KB of rows (within SQL_MAX_RESULT_BYTES) was sent whole and the model refused
  // the input as too long: the turn failed with 502 instead of the model reading what fit.
  it("cuts a current turn's tool result past half the budget, in the model's input only, and says so", () => {
    const c = call("query_data");
    const rows = "row ".repeat(20_000);
    const big = result(c, rows);
    const { window, tokens } = fitTurns([human("q"), c, big], 4000);
    expect(tokens).toBeLessThanOrEqual(4000);
    const shown = window.at(-1) as ToolMessage;
    expect([shown.id, shown.tool_call_id, shown.name]).toEqual([big.id, big.tool_call_id, big.name]);
    expect(shown.content).toMatch(
      /^row row .*\n\[cut here: the whole result is \d+ tokens, more than the \d+ this turn can show/s,
    );
    expect(big.content).toBe(rows); // the stored message keeps it all
    const small = result(c, "row ".repeat(100));
    expect(fitTurns([human("q"), c, small], 4000).window.at(-1)!.content).toBe(small.content);
    expect(fitTurns([human("q"), c, big], Number.POSITIVE_INFINITY).window.at(-1)!.content).toBe(rows);
  });

  // The cut was sized in UTF-16 units and kept that many characters: text of emoji (two units,
  // four bytes each) kept twice its share, and two such results still overflowed the input.
  it("cuts to the share in tokens whatever the text's characters, the share split between a turn's results", () => {
    for (const unit of ["😀", "é", "中", "a", "\uD800x"]) {
      const c = call("query_data");
      const one = fitTurns([human("q"), c, result(c, unit.repeat(40_000))], 4000).window.at(-1)!;
      expect(messagesTokens([one])).toBeLessThanOrEqual(2000);
      expect(messagesTokens([one])).toBeGreaterThan(1500);
      const d = call("query_data");
      const two = [human("q"), c, result(c, unit.repeat(40_000)), d, result(d, unit.repeat(40_000))];
      expect(fitTurns(two, 4000).tokens).toBeLessThanOrEqual(4000);
    }
  });

  // The cut depended on the calibration ratio and on how many results the turn had so far, so a
  // result the model had read was cut differently on the next call of the same turn: the model
  // lost text, and the request's prefix (prompt caching) changed.
  it("cuts a result the same on every call of its turn, whatever came after it or the ratio", () => {
    const c = call("query_data");
    const first = result(c, "row ".repeat(20_000));
    const d = call("query_data");
    const later = [human("q"), c, first, d, result(d, "more ".repeat(20_000))];
    const shown = (messages: BaseMessage[], ratio: number) =>
      contextWindow("prompt", 0, { budget: 4000, summarizer: {} as never })
        .modelInput({ messages, summary: "", tokenRatio: ratio } as never)
        .messages.find((m) => m.id === first.id)!.content;
    const once = shown([human("q"), c, first], 1);
    expect(once).toMatch(/\[cut here/);
    expect(shown(later, 1)).toBe(once);
    expect(shown(later, 1.8)).toBe(once);
  });

  // The share was half the budget whatever else the turn held: a 12 KB message and its SQL
  // left no room, and the input still overflowed (502). Results past the share each kept 200
  // tokens, so twenty of them took more than the whole budget.
  it("cuts results to the room the turn's other messages leave, and to a note once none is left", () => {
    const c = call("query_data");
    const long = human("x".repeat(3000 * 4));
    const { tokens } = fitTurns([long, c, result(c, "row ".repeat(20_000))], 4000);
    expect(tokens).toBeLessThanOrEqual(4000 + 100);
    const many: BaseMessage[] = [human("q")];
    for (let i = 0; i < 20; i++) {
      const ci = call("query_data");
      many.push(ci, result(ci, "row ".repeat(20_000)));
    }
    expect(fitTurns(many, 6000).tokens).toBeLessThanOrEqual(6000);
  });

  // A message that filled the room left a negative share: a tool's short error (the reason the call
  // failed) was replaced by a note larger than it, saying "more than the -587 this turn can show".
  it("keeps a result no larger than the note whole, and never shows a negative share", () => {
    const c = call("store_memory");
    const long = human("x".repeat(5000 * 4));
    const error = result(c, "content is too long: the limit is 2000 characters");
    expect(fitTurns([long, c, error], 4000).window.at(-1)!.content).toBe(error.content);
    const big = fitTurns([long, c, result(c, "row ".repeat(20_000))], 4000).window.at(-1)!.content as string;
    expect(big).toMatch(/more than the 0 this turn can show/);
  });

  it("marks the end of the previous turn as the stable prefix", () => {
    const { window } = fitTurns(history, 100_000);
    expect(window[stablePrefixEnd(window)]!.content).toBe(history.at(-5)!.content);
    expect(stablePrefixEnd([human("only")])).toBe(-1);
  });
});
