import { offlineStructuredRule } from "../../shared/models/offline-rules";
import { TOOLS } from "../tools/registry";
import { TOOL_NAMES } from "./prompts";

/**
 * The offline stand-in's answers to the support agent's structured outputs: lexical rules
 * over the tagged prompt (graph/support/prompts.ts). Coverage counts how many of the
 * question's content words the best gathered passage contains.
 */
const STOP = new Set(
  "how much does what when where which who why can could would should the for and with about your you my is are do does did i a an to of in on it this that there be have has get any me we our us please".split(
    " ",
  ),
);

const tag = (prompt: string, name: string) => new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(prompt)?.[1] ?? "";
const words = (text: string) =>
  (text.toLowerCase().match(/[a-z0-9]+/g) ?? []).filter((w) => !STOP.has(w)).map((w) => w.replace(/s$/, ""));

interface Passage {
  source: string;
  content: string;
}

function gathered(prompt: string): Passage[] {
  try {
    return JSON.parse(tag(prompt, "gathered") || "[]") as Passage[];
  } catch {
    return [];
  }
}

/** The passage sharing most of the question's words, with the share found. */
function best(prompt: string): { passage?: Passage; share: number } {
  const asked = [...new Set(words(tag(prompt, "question")))];
  let top: { passage?: Passage; share: number } = { share: 0 };
  for (const passage of gathered(prompt)) {
    const text = passage.content.toLowerCase();
    const share = asked.length === 0 ? 0 : asked.filter((w) => text.includes(w)).length / asked.length;
    if (share > top.share) top = { passage, share };
  }
  return top;
}

/**
 * Plans as the chat stand-in calls tools: every available tool whose hint answers questions (those
 * narrowed with `about` only when it matches), with the arguments its hint gives.
 */
function plan(prompt: string) {
  const question = tag(prompt, "question");
  const available = tag(prompt, "tools").split(/,\s*/);
  const calls = TOOLS.filter((tool) => available.includes(tool.name) && tool.offline?.trigger === "question")
    .filter((tool) => !tool.offline?.about || tool.offline.about.test(question))
    .map((tool) => ({
      tool_name: tool.name,
      parameters: tool.offline?.args ? tool.offline.args(question) : { query: question },
      reasoning: tool.gathers === "passages" ? "look the question up in the docs" : "the question is about them",
    }));
  return { reasoning: "gather what answers the question", tool_calls: calls };
}

const SUPPORT_RULES: Record<keyof typeof TOOL_NAMES, (prompt: string) => Record<string, unknown>> = {
  plan,
  coverage: (prompt) => {
    const { share } = best(prompt);
    const sufficient = share >= 0.6;
    return {
      data_sufficient: sufficient,
      coverage_score: Number(share.toFixed(2)),
      missing_data: sufficient ? [] : ["a document that answers the question"],
      reasoning: `the best passage contains ${Math.round(share * 100)}% of the question's words`,
    };
  },
  draft: (prompt) => {
    const { passage } = best(prompt);
    if (!passage) return { reply: "", route_to_team: true, reasoning: "nothing to answer from" };
    const text = passage.content.replace(/^#+\s.*\n+/gm, "").trim();
    return {
      reply: `Hi! Here is what our documentation says:\n\n${text}\n\n(Source: ${passage.source})`,
      route_to_team: false,
      reasoning: "quoted the best passage",
    };
  },
  validate: (prompt) => {
    const draft = tag(prompt, "draft");
    const supported = gathered(prompt).some(
      (p) => draft.includes(`(Source: ${p.source})`) && draft.includes(p.content.replace(/^#+\s.*\n+/gm, "").trim()),
    );
    return {
      valid: supported,
      issues: supported ? [] : ["the draft is not a quote of a gathered document"],
      reasoning: supported ? "every sentence is quoted from a cited source" : "unsupported content",
    };
  },
};

for (const [step, rule] of Object.entries(SUPPORT_RULES))
  offlineStructuredRule(TOOL_NAMES[step as keyof typeof TOOL_NAMES], rule);
