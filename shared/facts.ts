/**
 * Rules that read durable facts out of what a user wrote: the offline stand-in's fact
 * extraction, and the "subject" of a fact (what it is about), which reconciliation uses
 * to tell a changed fact ("my favourite colour is now green") from a new one.
 * English only, and deliberately narrow: a missed fact costs less than a wrong one.
 */

export type FactCategory = "preference" | "personal" | "work" | "decision" | "constraint";

export interface Fact {
  content: string;
  category: FactCategory;
  /** a short key for what the fact is about, e.g. "favourite colour", "employer" */
  subject: string;
}

const FILLERS = /^(actually|also|oh|and|btw|by the way|well|so|just so you know|fyi|please|remember|that)\b[,:\s]*/i;

interface Rule {
  pattern: RegExp;
  fact: (m: RegExpExecArray) => Omit<Fact, "content"> & { content?: string };
}

const head = (phrase: string, words = 2) =>
  phrase
    .toLowerCase()
    .replace(/^(a|an|the|my|some|to)\s+/g, "")
    .split(/\s+/)
    .slice(0, words)
    .join(" ");

const RULES: Rule[] = [
  {
    // my favourite colour is (now) green
    pattern: /^my ([a-z][\w' -]{0,40}?) (?:is|are) (?:now |still )?(.+?)(?: now)?$/i,
    fact: (m) => ({
      content: `My ${m[1]!.trim()} is ${m[2]!.trim()}`,
      category: /favou?rite|prefer/i.test(m[1]!) ? "preference" : "personal",
      subject: m[1]!.trim().toLowerCase(),
    }),
  },
  {
    pattern:
      /^i (?:really |usually |always |much )?(prefer|like|love|enjoy|hate|dislike|don't like|do not like|can't stand)\s+(.+)$/i,
    fact: (m) => ({ category: "preference", subject: `likes ${head(m[2]!)}` }),
  },
  {
    pattern: /^i(?:'m| am)? (?:now )?(?:work|working) (at|for|as) (.+)$/i,
    fact: (m) => ({ category: "work", subject: m[1]!.toLowerCase() === "as" ? "job title" : "employer" }),
  },
  {
    pattern: /^i(?:'m| am)? (?:now )?(?:live|living) in (.+)$/i,
    fact: () => ({ category: "personal", subject: "home city" }),
  },
  {
    pattern: /^i(?:'m| am) (allergic to|intolerant to) (.+)$/i,
    fact: (m) => ({ category: "constraint", subject: `allergy ${head(m[2]!, 1)}` }),
  },
  {
    pattern: /^i(?:'m| am) (?:a |an )?(vegetarian|vegan|pescatarian)\b/i,
    fact: () => ({ category: "constraint", subject: "diet" }),
  },
  {
    pattern: /^(?:we|i) (?:have )?(?:decided|chose|agreed|picked) (?:to |on )?(.+)$/i,
    fact: (m) => ({ category: "decision", subject: `decision ${head(m[1]!)}` }),
  },
  {
    pattern: /^i (?:use|speak|drink|eat|need|want|play|am learning|'m learning|own|have) (.+)$/i,
    fact: (m) => ({ category: "personal", subject: `has ${head(m[1]!)}` }),
  },
];

function clean(sentence: string): string {
  let s = sentence.trim().replace(/[.!]+$/, "");
  for (let prev = ""; prev !== s;) {
    prev = s;
    s = s.replace(FILLERS, "").trim();
  }
  return s;
}

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** One fact from one sentence, or none. */
export function factOf(sentence: string): Fact | undefined {
  const s = clean(sentence);
  if (s.length < 6 || s.length > 300 || s.endsWith("?")) return undefined;
  for (const rule of RULES) {
    const m = rule.pattern.exec(s);
    if (!m) continue;
    const { content, ...rest } = rule.fact(m);
    return { content: capitalise(content ?? s), ...rest };
  }
  return undefined;
}

/** Up to `max` facts from a message; questions and small talk give none. */
export function factsIn(text: string, max = 5): Fact[] {
  const facts: Fact[] = [];
  for (const sentence of text.split(/(?<=[.!?;])\s+|\n+/)) {
    const fact = factOf(sentence);
    if (fact && !facts.some((f) => f.content.toLowerCase() === fact.content.toLowerCase())) facts.push(fact);
    if (facts.length >= max) break;
  }
  return facts;
}

/** The subject of a stored memory's content, when the rules can tell. */
export const subjectOf = (content: string) => factOf(content)?.subject;
