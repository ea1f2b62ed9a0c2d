// `npm run kb -- <command>`: the knowledge base from a terminal, on the local stack or a deployment.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { KbApiError, KbClient } from "./client";
import { collectDocuments, documentsFromJson } from "./files";
import { push } from "./push";
import { formatTable } from "./table";

const USAGE = `usage: npm run kb -- <command> [--api URL]

  push <files or folders...>   upload what changed, wait until each is ingested, skipped or failed
  push --json file.json        the same for a JSON list of {source, content}
  ls                           every document: status, chunks, size, reason
  show <source>                one document and its chunks
  rm <source>                  delete a document (its chunks go with the bucket's event)
  search "<question>"          what search_knowledge_base returns, with scores

--api defaults to KB_API_URL, else the local stack on PORT as \`npm start\` reads it (3000 when unset).
Against a deployment, set KB_TOKEN to an admin's JWT, or to "ApiKey <key>" for a trusted API key.`;

export interface Io {
  out: (line: string) => void;
  err: NodeJS.WritableStream;
  env: Record<string, string | undefined>;
}

/** Runs one command; the exit code is the return value (0 ok, 1 a document not ingested or the API refused, 2 usage). */
export async function main(argv: string[], io: Io): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    io.out(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, ...args] = positionals;
  const api = values.api ?? io.env.KB_API_URL ?? `http://localhost:${io.env.PORT || 3000}`;
  const client = new KbClient({
    api,
    token: io.env.KB_TOKEN,
  });
  try {
    switch (command) {
      case "push": {
        const { documents, ignored } = values.json
          ? { documents: documentsFromJson(readFileSync(values.json, "utf8")), ignored: [] }
          : collectDocuments(args);
        if (documents.length === 0) {
          io.out("nothing to push: no supported documents (.md .markdown .txt .html .htm .json .pdf .docx)");
          return 2;
        }
        for (const file of ignored) io.out(`ignored (unsupported type): ${file}`);
        const results = await push(client, documents, { progress: io.err });
        io.out(
          formatTable(
            results.map((r) => ({
              source: r.source,
              status: r.status,
              chunks: r.chunks,
              uploaded: r.uploaded ? "yes" : "no (unchanged)",
              reason: r.reason,
            })),
          ),
        );
        const uploaded = results.filter((r) => r.uploaded).length;
        io.out(`${uploaded} uploaded, ${results.length - uploaded} unchanged`);
        // Non-zero when a document is not in the knowledge base as pushed, so a script notices.
        return results.some((r) => r.status !== "ingested") ? 1 : 0;
      }
      case "ls": {
        const docs = await client.list();
        io.out(
          formatTable(
            docs.map((d) => ({
              source: d.source,
              status: d.status,
              chunks: d.chunks,
              bytes: d.bytes,
              type: d.content_type,
              updated: d.updated_at,
              reason: d.reason,
            })),
          ),
        );
        return 0;
      }
      case "show": {
        if (!args[0]) throw new UsageError("show needs a source");
        const doc = await client.show(args[0]);
        io.out(
          `${doc.source}: ${doc.status}${doc.reason ? ` (${doc.reason})` : ""}, ${doc.bytes ?? "?"} bytes, ${doc.content_type ?? "?"}`,
        );
        io.out(
          formatTable(
            doc.chunks.map((c) => ({
              "#": c.index,
              headings: c.headings,
              chars: c.chars,
              starts: oneLine(c.preview, 80),
            })),
          ),
        );
        return 0;
      }
      case "rm": {
        if (!args[0]) throw new UsageError("rm needs a source");
        await client.remove(args[0]);
        // Gone once the bucket's delete event has gone through ingestion.
        const deadline = Date.now() + 60_000;
        while ((await client.list()).some((d) => d.source === args[0]) && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 250));
        }
        io.out(`removed ${args[0]}`);
        return 0;
      }
      case "search": {
        if (!args[0]) throw new UsageError('search needs a question: search "how much is Pro?"');
        const matches = await client.search(args.join(" "));
        io.out(
          formatTable(
            matches.map((m) => ({ score: m.score.toFixed(4), source: m.source, starts: oneLine(m.content, 100) })),
          ),
        );
        return 0;
      }
      default:
        throw new UsageError(command ? `unknown command "${command}"` : "no command");
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.out(`${err.message}\n\n${USAGE}`);
      return 2;
    }
    if (err instanceof KbApiError || (err as Error).name === "TypeError") {
      io.out(
        `error: ${(err as Error).message}${(err as Error).name === "TypeError" ? ` (is the API at ${api} running?)` : ""}`,
      );
      return 1;
    }
    throw err;
  }
}

class UsageError extends Error {}

const parse = (argv: string[]) =>
  parseArgs({
    args: argv,
    allowPositionals: true,
    options: { api: { type: "string" }, json: { type: "string" } },
  });

const oneLine = (text: string, max: number) => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2), {
    out: (line) => console.log(line),
    err: process.stderr,
    env: process.env,
  });
}
