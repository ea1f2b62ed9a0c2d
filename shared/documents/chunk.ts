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
    if (text && !/^#{1,6}\s+[^\n]*$/.test(text)) sections.push({ headings: [...path], text });
    lines = [];
  };
  for (const line of markdown.split(/\r?\n/)) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^(#{1,6})\s+(.+?)\s*#*\s*$/.exec(line);
    if (heading) {
      flush();
      path.length = heading[1]!.length - 1;
      path[heading[1]!.length - 1] = heading[2]!;
      lines.push(line);
    } else lines.push(line);
  }
  flush();
  return sections.map((s) => ({ ...s, headings: s.headings.filter(Boolean) }));
}

/** Splits a document into overlapping chunks; markdown chunks carry their heading path. */
export async function chunkText(text: string, markdown: boolean, options: ChunkOptions): Promise<TextChunk[]> {
  const splitter = markdown
    ? RecursiveCharacterTextSplitter.fromLanguage("markdown", options)
    : new RecursiveCharacterTextSplitter(options);
  const sections = markdown ? markdownSections(text) : [{ headings: [], text }];
  const chunks: TextChunk[] = [];
  for (const section of sections) {
    for (const content of await splitter.splitText(section.text)) {
      if (!content.trim()) continue;
      chunks.push({ content, metadata: section.headings.length ? { headings: section.headings.join(" > ") } : {} });
    }
  }
  return chunks;
}
