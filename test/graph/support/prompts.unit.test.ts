import {
  coveragePrompt,
  draftPrompt,
  planPrompt,
  QUESTION_MAX_CHARS,
  TRANSCRIPT_MAX_CHARS,
  validatePrompt,
} from "../../../graph/support/prompts";
import type { ChatLine } from "../../../graph/support/state";

// A customer who pastes a long log must not put every later message of the conversation past the
// model's window (each would fail to plan, and go to the team as "the plan step failed").

const log = "ERROR 2026-11-28 worker crashed\n".repeat(2_600); // about 80 KB
const question = "How much does the Pro plan cost?";

describe("support prompts", () => {
  it("bound a conversation with a pasted log, keeping the latest messages and the question", () => {
    const messages: ChatLine[] = [
      { role: "user", content: "Hi, my export fails" },
      ...Array.from({ length: 4 }, () => ({ role: "user" as const, content: log })),
      { role: "assistant", content: "Thanks, looking." },
      { role: "user", content: question },
    ];
    const prompt = planPrompt(messages, question, ["search_knowledge_base"], []);
    expect(prompt.length).toBeLessThan(TRANSCRIPT_MAX_CHARS + 2 * QUESTION_MAX_CHARS);
    expect(prompt).toContain(`user: ${question}`);
    expect(prompt).toContain(`<question>${question}</question>`);
    expect(prompt).toMatch(/\[\d earlier message\(s\) left out\]/);
    expect(prompt).not.toContain("my export fails");
    expect(prompt).toContain("more characters]");
  });

  it("bound a pasted question in every prompt", () => {
    for (const prompt of [
      planPrompt([{ role: "user", content: log }], log, [], []),
      coveragePrompt(log, []),
      draftPrompt(log, []),
      validatePrompt(log, [], "draft"),
    ])
      expect(prompt.length).toBeLessThan(TRANSCRIPT_MAX_CHARS + 2 * QUESTION_MAX_CHARS);
  });

  it("cut a question between characters, never inside a surrogate pair", () => {
    const question = `${"a".repeat(QUESTION_MAX_CHARS - 1)}🦆 and more`;
    const section = /<question>([\s\S]*)<\/question>/.exec(coveragePrompt(question, []))![1]!;
    expect(section).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
    expect(section).toMatch(/^a+ \[…cut: /);
  });
});
