import { RecursiveCharacterTextSplitter } from "@langchain/textsplitters";

export interface TextChunk {
  content: string;
  metadata: { headings?: string };
}

export interface ChunkOptions {
  chunkSize: number;
  chunkOverlap: number;
}

interface Section {
  headings: string[];
  text: string;
}

/**
 * Markdown sections with their heading path ("Billing > Refunds"). Heading lines inside
 * fenced code blocks are code, not headings. The splitter does not track headings, hence this.
 */
function markdownSections(markdown: string): Section[] {
  const sections: Section[] = [];
  const path: string[] = [];
  let lines: string[] = [];
  let fenced = false;
  const flush = () => {
    const text = lines.join("\n").trim();
    // A heading with no body before the next heading is carried by its subsections' paths.
    const headingOnly = !text.includes("\n") && atxHeading(text) !== undefined;
    if (text && !headingOnly) sections.push({ headings: [...path], text });
    lines = [];
  };
  for (const line of markdown.split(/\r?\n/)) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? undefined : atxHeading(line);
    if (heading) {
      flush();
      path.length = heading.level - 1;
      path[heading.level - 1] = heading.title;
      lines.push(line);
    } else lines.push(line);
  }
  flush();
  return sections.map((s) => ({ ...s, headings: s.headings.filter(Boolean) }));
}

/**
 * An ATX heading (`## Title ##`): its level and title, as CommonMark reads it (a closing run of #
 * goes only after whitespace, so `# C#` is "C#"). Read by hand, not by a pattern: every pattern
 * for "title, then optional spaces and #s" backtracks over a long run of spaces, which cost an
 * ingestion 75 s on one 8 KB line, and a running pattern cannot be stopped by the deadline.
 */
function atxHeading(line: string): { level: number; title: string } | undefined {
  let level = 0;
  while (level < line.length && line[level] === "#") level++;
  if (level < 1 || level > 6 || !/\s/.test(line[level] ?? "")) return undefined;
  let title = line.slice(level).trim();
  let end = title.length;
  while (end > 0 && title[end - 1] === "#") end--;
  if (end < title.length && (end === 0 || /\s/.test(title[end - 1]!))) title = title.slice(0, end).trimEnd();
  return title ? { level, title } : undefined;
}

/** The heading path a chunk carries, at most (each heading at most HEADING_MAX_CHARS). */
export const HEADING_PATH_MAX_CHARS = 1000;
const HEADING_MAX_CHARS = 200;

/**
 * A section's heading path as its chunks carry it, bounded: every chunk of the section carries it,
 * so an unbounded heading would be stored once per chunk (a 300 KB heading made a 589 KB file
 * into gigabytes of metadata).
 */
function headingPath(headings: string[]): string {
  const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
  return cut(headings.map((h) => cut(h, HEADING_MAX_CHARS)).join(" > "), HEADING_PATH_MAX_CHARS);
}

/** Splits a document into overlapping chunks; markdown chunks carry their heading path. */
export async function chunkText(text: string, markdown: boolean, options: ChunkOptions): Promise<TextChunk[]> {
  const splitter = markdown
    ? RecursiveCharacterTextSplitter.fromLanguage("markdown", options)
    : new RecursiveCharacterTextSplitter(options);
  const sections = markdown ? markdownSections(text) : [{ headings: [], text }];
  const chunks: TextChunk[] = [];
  for (const section of sections) {
    const metadata = section.headings.length ? { headings: headingPath(section.headings) } : {};
    for (const content of await splitter.splitText(section.text)) {
      if (!content.trim()) continue;
      chunks.push({ content, metadata });
    }
  }
  return chunks;
}
