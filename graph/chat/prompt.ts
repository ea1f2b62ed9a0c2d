import type { StructuredToolInterface } from "@langchain/core/tools";

/**
 * The system prompt, built at call time from the bound tools. It is never stored in a
 * thread: every model call gets the current prompt, and checkpoints hold only the dialogue.
 */
export function systemPrompt(
  tools: StructuredToolInterface[],
  options: { toolCalling?: boolean; intro?: string } = {},
): string {
  // An assistant's own prompt takes the place of the default opening; what follows about the tools stays.
  const lines = [
    options.intro ?? "You are a helpful assistant inside a product's chat. Answer concisely and accurately.",
  ];
  if (options.toolCalling === false) {
    lines.push(
      "You have no tools: this model cannot call them. You cannot look anything up, remember anything for later, or see the user's account; say so when asked, and never invent such facts.",
    );
    return lines.join("\n");
  }
  if (tools.length === 0) {
    lines.push(
      "This session has no tools turned on: you cannot look anything up or remember anything for later. Say so when asked, and never invent facts about the user or the company.",
    );
    return lines.join("\n");
  }
  lines.push(
    "Never invent facts about the user or the company: look them up with your tools, and say so when you cannot find them.",
  );
  const has = (name: string) => tools.some((t) => t.name === name);
  lines.push("", "Your tools:");
  for (const tool of tools) lines.push(`- ${tool.name}: ${tool.description}`);
  lines.push("");
  if (has("recall_memory")) lines.push("Use the memory tools for what the user told you in earlier sessions.");
  if (has("recall_memory") && !has("store_memory"))
    lines.push("Nothing from this session is remembered: do not offer to remember anything.");
  if (has("search_knowledge_base")) lines.push("Use knowledge search for the company's documents.");
  lines.push("The user and project are known to the tools already; never ask for or pass ids.");
  if (has("recall_memory")) {
    lines.push(
      "In a long conversation, older messages are replaced by a summary; details the user stated earlier can be recalled with recall_memory.",
    );
  }
  return lines.join("\n");
}
