import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCheckpointTable, DynamoDBSaver } from "../../graph/checkpoint";
import { bundleFunction } from "../../infra/aws/bundle/build";
import { DEFAULT_SQL_LIMITS } from "../../shared/files/sql-errors";
import { startLocalDynamo, type LocalDynamo } from "../../infra/local/dynamo";
import { bundled } from "../support/bundles";
import { apiEvent, chatEvent } from "../support/events";

/**
 * The chat function as the stack deploys it: the trimmed bundle, imported in a fresh Node
 * process from a folder without node_modules (the AWS SDK is in the bundle), running
 * real turns against dynalite with the offline stand-in model. The second turn revives the first
 * turn's checkpoint through the trimmed LangChain load map.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const TABLE = "bundled-chat";
let dynamo: LocalDynamo;
let outdir: string;

beforeAll(async () => {
  // Outside the project (the run's temp folder): the bundle must run without its node_modules, as in Lambda.
  [dynamo, outdir] = await Promise.all([startLocalDynamo(), bundled("chat")]);
  await createCheckpointTable(dynamo.client, TABLE);
}, 120_000);
afterAll(async () => {
  await dynamo?.close();
});

/** The bundle's code, its entry and every chunk. */
const bundleText = (dir: string) =>
  readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".mjs"))
    .map((f) => readFileSync(join(dir, f), "utf8"))
    .join("\n");

/**
 * Runs the bundle's handler on each event in turn, in one process (one warm container).
 * Asynchronously: dynalite answers from this process. With `warmUp`, the bundle's loadDeferred
 * runs first: what the cold-start bench times as a first request's loads.
 */
async function invokeBundle(
  events: unknown[],
  {
    env = {},
    loaded,
    warmUp = false,
    dir = outdir,
    mapsRead,
  }: { env?: Record<string, string>; loaded?: string[]; warmUp?: boolean; dir?: string; mapsRead?: string[] } = {},
): Promise<Array<{ statusCode: number; body: string }>> {
  const script = `
    (async () => {
      const { handler, loadDeferred } = await import(${JSON.stringify(join(dir, "index.mjs"))});
      if (${warmUp}) await loadDeferred();
      const out = [];
      for (const event of JSON.parse(process.env.EVENTS)) {
        if (out.length && event.body) event.body = event.body.replace("SESSION", JSON.parse(out[0].body).session_id);
        out.push(await handler(event, { awsRequestId: "r", functionName: "chat", getRemainingTimeInMillis: () => 29000 }));
      }
      process.stdout.write(JSON.stringify(out));
      process.exit(0);
    })().catch((e) => { console.error(e); process.exit(1); });`;
  // With `loaded`: a module hook names every chunk the process imports, on stderr.
  // Written synchronously: the hook runs on the loader's thread, whose asynchronous writes the
  // child's exit can cut short.
  const hook = `import { writeSync } from "node:fs"; export async function resolve(s, c, next) { const r = await next(s, c); if (r.url.includes("/chunks/")) writeSync(2, "chunk " + r.url.slice(r.url.lastIndexOf("/") + 1) + "\\n"); return r; }`;
  const register = `data:text/javascript,${encodeURIComponent(`import { register } from "node:module"; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});`)}`;
  // With `mapsRead`: every source map the process reads, on stderr (fs.readFileSync wrapped before the bundle loads).
  const watchMaps = `data:text/javascript,${encodeURIComponent(`import { syncBuiltinESMExports } from "node:module"; import fs, { writeSync } from "node:fs"; const read = fs.readFileSync; fs.readFileSync = function (path, ...rest) { if (String(path).endsWith(".map")) writeSync(2, "map " + String(path) + "\\n"); return read.call(this, path, ...rest); }; syncBuiltinESMExports();`)}`;
  const args = [...(loaded ? ["--import", register] : []), ...(mapsRead ? ["--import", watchMaps] : []), "-e", script];
  const { stdout, stderr } = await promisify(execFile)(process.execPath, args, {
    timeout: 60_000,
    env: {
      ...env,
      PATH: process.env.PATH,
      EVENTS: JSON.stringify(events),
      CHECKPOINT_TABLE: TABLE,
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: "local",
      AWS_SECRET_ACCESS_KEY: "local",
      LOG_LEVEL: "SILENT",
      POWERTOOLS_METRICS_DISABLED: "true",
    },
  });
  loaded?.push(...stderr.split("\n").flatMap((line) => (line.startsWith("chunk ") ? [line.slice(6)] : [])));
  mapsRead?.push(...stderr.split("\n").flatMap((line) => (line.startsWith("map ") ? [line.slice(4)] : [])));
  return JSON.parse(stdout);
}

describe("the deployed chat bundle", () => {
  it("answers two turns of one session, the second resuming the first's checkpoint", async () => {
    const authorizer = { principalId: "u-bundle", userId: "u-bundle" };
    const [first, second] = await invokeBundle([
      chatEvent({ message: "hello there" }, { authorizer }),
      chatEvent({ message: "and again", session_id: "SESSION" }, { authorizer }),
    ]);
    expect(first!.statusCode).toBe(200);
    expect(second!.statusCode).toBe(200);
    const sessionId = JSON.parse(first!.body).session_id as string;
    expect(JSON.parse(second!.body).session_id).toBe(sessionId);
    expect(JSON.parse(second!.body).reply).toEqual(expect.any(String));

    // Read back with the unbundled saver: both turns' messages, as message classes.
    const saver = new DynamoDBSaver({ client: dynamo.client, tableName: TABLE });
    const tuple = await saver.getTuple({ configurable: { thread_id: sessionId } });
    const messages = tuple!.checkpoint.channel_values.messages as Array<{ getType(): string; content: unknown }>;
    expect(messages.map((m) => m.getType())).toEqual(["human", "ai", "human", "ai"]);
    expect(messages[2]!.content).toBe("and again");
  });

  it("logs an error's stack in source positions in Lambda, and reads no source map for a turn that logs none", async () => {
    const authorizer = { principalId: "u-bundle", userId: "u-bundle" };
    // A turn that logs nothing: Node formats the stack of a web stream's released-reader error as
    // it makes it, in every streamed turn; no map is read for it.
    const mapsRead: string[] = [];
    const [turn] = await invokeBundle([chatEvent({ message: "hello there" }, { authorizer })], {
      env: { AWS_LAMBDA_FUNCTION_NAME: "chat" },
      mapsRead,
    });
    expect(turn!.statusCode).toBe(200);
    expect(mapsRead).toEqual([]);
    // A turn whose table cannot be reached logs its error: the stack and location in source positions.
    const script = `import(${JSON.stringify(join(outdir, "index.mjs"))}).then(async ({ handler }) => {
      await handler(${JSON.stringify(chatEvent({ message: "hi" }, { authorizer }))}, { awsRequestId: "r", functionName: "chat", getRemainingTimeInMillis: () => 29000 });
      process.exit(0);
    })`;
    const logged = async (env: Record<string, string>) => {
      const { stderr } = await promisify(execFile)(process.execPath, ["-e", script], {
        env: {
          PATH: process.env.PATH,
          AWS_REGION: "us-east-1",
          AWS_ACCESS_KEY_ID: "local",
          AWS_SECRET_ACCESS_KEY: "local",
          CHECKPOINT_TABLE: TABLE,
          AWS_ENDPOINT_URL_DYNAMODB: "http://127.0.0.1:9", // nothing listens there
          AWS_MAX_ATTEMPTS: "1",
          LOG_LEVEL: "ERROR",
          POWERTOOLS_METRICS_DISABLED: "true",
          ...env,
        },
      });
      // Powertools writes an error's log line to stderr.
      const line = stderr.split("\n").find((l) => l.includes('"level":"ERROR"'));
      return (JSON.parse(line!) as { error: { stack: string; location: string; status: number } }).error;
    };
    const inLambda = await logged({ AWS_LAMBDA_FUNCTION_NAME: "chat" });
    expect(inLambda.stack).toMatch(/\n {4}at .*graph\/chat\/\w[\w-]*\.ts:\d+:\d+\)/);
    expect(inLambda.location).toMatch(/graph\/chat\/[\w-]+\.ts:\d+$/);
    expect(inLambda.status).toBe(503); // the error's own fields are kept
    // Outside Lambda nothing is mapped: the positions are the minified bundle's.
    expect((await logged({})).stack).not.toMatch(/\.ts:\d+/);
  });

  it("ships no native code: DuckDB runs in the data function, not here", () => {
    expect(readdirSync(outdir)).not.toContain("node_modules");
    expect(bundleText(outdir)).not.toContain("@duckdb/node-api");
  });

  it("loads for a plain turn neither S3's client nor the data function's, nor anything loadDeferred (which the cold-start bench times) leaves out", async () => {
    // The stack configures both for the chat function.
    const env = { ATTACHMENTS_BUCKET: "attachments", DATA_FUNCTION_NAME: "data" };
    const authorizer = { principalId: "u-bundle", userId: "u-bundle" };
    const turnLoads: string[] = [];
    const benchLoads: string[] = [];
    const [turn] = await invokeBundle([chatEvent({ message: "hello there" }, { authorizer })], {
      env,
      loaded: turnLoads,
    });
    expect(turn!.statusCode).toBe(200);
    await invokeBundle([], { env, loaded: benchLoads, warmUp: true });
    // Both runs were watched: each imported the first request's merged chunk (infra/aws/bundle/merge.ts).
    for (const loads of [turnLoads, benchLoads])
      expect(loads.some((chunk) => chunk.startsWith("first-request-"))).toBe(true);
    // What a cold start reads beyond the entry: two files, init's chunks and the first request's, merged.
    expect(new Set(benchLoads.map((chunk) => /^(init|first-request)-/.exec(chunk)?.[1] ?? chunk))).toEqual(
      new Set(["init", "first-request"]),
    );
    expect(turnLoads.filter((chunk) => /^(objects|lambda-engine)-/.test(chunk))).toEqual([]);
    // This turn ran offline: it loaded the stand-ins (and what only they import) where a deployment
    // with Bedrock loads @langchain/aws, which loadDeferred counts instead.
    const standIns = turnLoads.filter((chunk) => /^(offline-chat-model|hashing-embeddings)-/.test(chunk));
    expect(standIns).toHaveLength(2);
    const theirs = standIns.flatMap((chunk) => [
      chunk,
      ...[...readFileSync(join(outdir, "chunks", chunk), "utf8").matchAll(/from\s*"\.\/([^"]+)"/g)].map((m) => m[1]!),
    ]);
    expect(turnLoads.filter((chunk) => !benchLoads.includes(chunk) && !theirs.includes(chunk))).toEqual([]);
  });

  it("holds @langchain/aws's Bedrock model classes, not its Kendra and Knowledge Base retrievers", () => {
    const code = bundleText(outdir);
    expect(code).toContain("ChatBedrockConverse");
    for (const unused of ["AmazonKendraRetriever", "AmazonKnowledgeBaseRetriever", "BedrockAgentRuntime"])
      expect(code).not.toContain(unused);
  });

  it("reaches Bedrock over HTTP/1.1: no code of it imports Node's http2 module", () => {
    expect(bundleText(outdir)).not.toMatch(/["']node:http2["']|["']http2["']/);
  });

  it("rejects bad input with a 400", async () => {
    const authorizer = { principalId: "u-bundle", userId: "u-bundle" };
    const [bad] = await invokeBundle([chatEvent("{not json", { authorizer })]);
    expect(bad!.statusCode).toBe(400);
  });

  it("leaves JSON-schema validation out (its tools declare zod), and keeps it where MCP tools run", async () => {
    // A string of @cfworker/json-schema's validator, and the stand-in's error (trims.ts).
    const validator = "Instance does not match";
    expect(bundleText(outdir)).not.toContain(validator);
    expect(bundleText(outdir)).toContain("JSON-schema validation is not bundled");
    // The support worker's MCP tools declare JSON schemas (graph/support/mcp-tools.ts).
    const support = bundleText(await bundled("support-worker"));
    expect(support).toContain(validator);
    expect(support).not.toContain("JSON-schema validation is not bundled");
  });

  it("leaves LangSmith's API client out unless asked, and says how to bundle it", async () => {
    const code = bundleText(outdir);
    expect(code).toContain("Deploy with -c langsmith=true");
    expect(code).not.toContain("/runs/batch");
    const traced = mkdtempSync(join(ROOT, "node_modules/.cache-bundle-test-"));
    try {
      await bundleFunction({ entry: join(ROOT, "functions/chat.ts"), outdir: traced, langsmith: true });
      expect(bundleText(traced)).toContain("/runs/batch");
    } finally {
      rmSync(traced, { recursive: true, force: true });
    }
  });
});

/**
 * The data function as the stack deploys it: its bundle and DuckDB's packages, in a folder with
 * nothing else, run by a fresh Node process that inspects an upload and runs a query the way the
 * other functions invoke it (an EngineRequest in, an EngineAnswer out), reading the objects
 * through the handler's own reader.
 */
describe("the deployed Agent Server bundle", () => {
  it("runs a thread's run to its end through its merged chunks (infra/aws/bundle/merge.ts)", async () => {
    const dir = await bundled("agent-server");
    const thread = "5b0c8f5e-3c1a-4d8e-9f6a-2b7d1c0e4a11";
    const authorizer = { principalId: "u-bundle", userId: "u-bundle" };
    const [created, run] = await invokeBundle(
      [
        apiEvent({
          method: "POST",
          resource: "/threads",
          path: "/threads",
          body: JSON.stringify({ thread_id: thread }),
          authorizer,
        }),
        apiEvent({
          method: "POST",
          resource: "/threads/{thread_id}/runs/wait",
          path: `/threads/${thread}/runs/wait`,
          pathParameters: { thread_id: thread },
          body: JSON.stringify({
            assistant_id: "chat",
            input: { messages: [{ type: "human", content: "hello there" }] },
          }),
          authorizer,
        }),
      ],
      { dir },
    );
    expect(created!.statusCode).toBe(200);
    expect(run!.statusCode).toBe(200);
    const messages = (JSON.parse(run!.body) as { messages: Array<{ type: string }> }).messages;
    expect(messages.map((m) => m.type)).toEqual(["human", "ai"]);
  });
});

describe("the deployed data bundle", () => {
  let dataDir: string;
  let probeDir: string;
  beforeAll(async () => {
    dataDir = await bundled("data", "duckdb");
    probeDir = mkdtempSync(join(tmpdir(), "bundle-data-probe-"));
  }, 120_000);
  afterAll(() => rmSync(probeDir, { recursive: true, force: true }));

  const KEY = "users/u-1/sessions/00000000-0000-4000-8000-000000000001/00000000-0000-4000-8000-000000000002";
  const limits = { ...DEFAULT_SQL_LIMITS, concurrency: 1 };
  async function ask(requests: unknown[]): Promise<unknown[]> {
    const script = `
      const { createDataHandler } = await import(${JSON.stringify(pathToFileURL(join(dataDir, "index.mjs")).href)});
      const objects = { [${JSON.stringify(KEY)}]: new TextEncoder().encode("region,amount\\neast,3\\nwest,4\\neast,5\\n") };
      const handler = createDataHandler(async () => async (key) => objects[key]);
      const out = [];
      for (const request of JSON.parse(process.env.REQUESTS)) out.push(await handler(request));
      process.stdout.write(JSON.stringify(out));`;
    writeFileSync(join(probeDir, "probe.mjs"), script);
    const { stdout } = await promisify(execFile)(process.execPath, [join(probeDir, "probe.mjs")], {
      cwd: probeDir,
      timeout: 60_000,
      env: { PATH: process.env.PATH, REQUESTS: JSON.stringify(requests), AWS_REGION: "us-east-1" },
    });
    return JSON.parse(stdout);
  }

  it("holds only its bundle and DuckDB's packages, with the Linux x64 binding", () => {
    expect(readdirSync(join(dataDir, "node_modules/@duckdb")).sort()).toEqual([
      "node-api",
      "node-bindings",
      "node-bindings-linux-x64",
    ]);
  });

  it("inspects an upload and runs a query from its own folder", async () => {
    const table = { name: "sales", key: KEY, format: "csv" };
    const [inspected, queried, refused] = await ask([
      { op: "inspect", key: KEY, name: "sales.csv", media_type: "text/csv", maxRows: 100, limits },
      {
        op: "query",
        tables: [table],
        sql: "SELECT region, SUM(amount)::INTEGER AS total FROM sales GROUP BY region ORDER BY region",
        limits,
      },
      { op: "query", tables: [{ ...table, key: "knowledge/secret.pdf" }], sql: "SELECT 1", limits },
    ]);
    expect(inspected).toMatchObject({ ok: true, value: { ok: true, kind: "data", table: "sales", row_count: 3 } });
    expect(queried).toEqual({
      ok: true,
      value: {
        columns: [
          { name: "region", type: "VARCHAR" },
          { name: "total", type: "INTEGER" },
        ],
        rows: [
          { region: "east", total: 8 },
          { region: "west", total: 4 },
        ],
        truncated: false,
      },
    });
    // A key this API did not make is refused before anything is read.
    expect(refused).toEqual({ ok: false, error: "sql", message: expect.stringMatching(/not one of this API's/) });
  }, 60_000);
});
