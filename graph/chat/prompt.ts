import type { StructuredToolInterface } from "@langchain/core/tools";

/**
 * The system prompt, built at call time from the bound tools. It is never stored in a
 * thread: every model call gets the current prompt, and checkpoints hold only the dialogue.
 */
export function systemPrompt(tools: StructuredToolInterface[]): string {
  const lines = [
    "You are a helpful assistant inside a product's chat. Answer concisely and accurately.",
    "Never invent facts about the user or the company: look them up with your tools, and say so when you cannot find them.",
  ];
  if (tools.length > 0) {
    lines.push("", "Your tools:");
    for (const tool of tools) lines.push(`- ${tool.name}: ${tool.description}`);
    lines.push(
      "",
      "Use memory tools for what the user told you in earlier sessions, and knowledge search for the company's documents.",
      "The user and project are known to the tools already; never ask for or pass ids.",
    );
    if (tools.some((t) => t.name === "recall_memory")) {
      lines.push(
        "In a long conversation, older messages are replaced by a summary; details the user stated earlier can be recalled with recall_memory.",
      );
    }
  }
  return lines.join("\n");
}
