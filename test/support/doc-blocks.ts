import type { CodeBlock } from "./markdown";

/**
 * How the docs' code blocks are marked (test/docs/runnable-docs.e2e.test.ts explains it to a doc
 * writer), what a transcript block says it prints, and how loosely that must match.
 */

const NOT_SHELL = new Set(["ts", "tsx", "text", "json"]);

export type BlockKind = { kind: "runnable" } | { kind: "not run"; why: string } | { kind: "unmarked"; error: string };

export function classify(block: CodeBlock): BlockKind {
  const [lang = "", marker, ...reason] = block.info.split(/\s+/).filter((w) => w !== "");
  if (NOT_SHELL.has(lang) && marker === undefined) return { kind: "not run", why: `${lang}, not shell` };
  if (lang !== "sh")
    return {
      kind: "unmarked",
      error: `fence "${block.info}": a shell block is \`sh\`, \`sh aws\` or \`sh skip <reason>\`; others are ${[...NOT_SHELL].join(", ")}`,
    };
  if (marker === undefined) return { kind: "runnable" };
  if (marker === "aws" && reason.length === 0) return { kind: "not run", why: "needs AWS" };
  if (marker === "skip" && reason.length > 0) return { kind: "not run", why: reason.join(" ") };
  return { kind: "unmarked", error: `fence "${block.info}": after \`sh\` comes \`aws\`, or \`skip\` and its reason` };
}

export interface Command {
  /** what the reader types, its continuation lines included */
  text: string;
  /** the lines the doc shows it printing */
  shown: string[];
}

/**
 * A transcript's commands, each with the output shown after it: a `$ ` line starts a command, a
 * trailing backslash continues it. Undefined for a block with no `$ ` line (a plain script).
 */
export function transcript(lines: string[]): Command[] | undefined {
  if (!lines.some((l) => l.startsWith("$ "))) return undefined;
  const commands: Command[] = [];
  let continued = false;
  for (const line of lines) {
    const current = commands.at(-1);
    if (continued && current) current.text += `\n${line}`;
    else if (line.startsWith("$ ")) commands.push({ text: line.slice(2), shown: [] });
    else if (current) current.shown.push(line);
    else if (line.trim() !== "") throw new Error(`a transcript's output before its first command: ${line}`);
    continued = line.endsWith("\\") && (continued || line.startsWith("$ "));
  }
  return commands;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A shown line as a pattern for a whole output line: `…` is any text, a run of spaces any spaces. */
const pattern = (shown: string) =>
  new RegExp(
    `^${shown
      .trim()
      .split("…")
      .map((part) => part.split(/\s+/).map(escapeRegExp).join("\\s+"))
      .join(".*")}$`,
  );

/**
 * The shown lines the output lacks. Each must match a whole output line (trimmed), in the order
 * shown; output lines the doc leaves out (npm's banner, a long table's other rows) may come between.
 * A shown line that is only `…` stands for lines left out.
 */
export function missingLines(shown: string[], output: string): string[] {
  const printed = output.split("\n").map((l) => l.trim());
  let from = 0;
  const missing: string[] = [];
  for (const line of shown.map((l) => l.trim()).filter((l) => l !== "" && l !== "…")) {
    const re = pattern(line);
    const at = printed.findIndex((p, i) => i >= from && re.test(p));
    if (at === -1) missing.push(line);
    else from = at + 1;
  }
  return missing;
}
