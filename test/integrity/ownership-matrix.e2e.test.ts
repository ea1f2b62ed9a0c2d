import { type DynamoDBClient, ScanCommand } from "@aws-sdk/client-dynamodb";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { localStackDataDir, localStackDynamo, localStackForTests } from "../support/local-stack";

// Ownership before effect, as a matrix over every route the deployment serves (infra/manifest.ts,
// the Agent Server API's included): a second user naming the owner's thread, session, run,
// checkpoint, file, memory or store item gets 404, and nothing of the owner's changes, whether
// the owner's thread is idle or a turn of theirs is running, for every multitask strategy.
//
// The routes come from the stack itself: a route added to the manifest without a line in ASKS
// fails the first test, and a route whose path names something owned must be a NOT_FOUND one.
// The offline model streams a word every 500 ms and the lease beats every second, so a cancel
// mark the barrage left would stop the owner's turn before it ends.

const holder = localStackForTests("ownership-matrix", {
  OFFLINE_STREAM_DELAY_MS: "500",
  SESSION_LEASE_MS: "3000",
});
const url = () => holder.stack.url;

const STRATEGIES = ["reject", "enqueue", "interrupt", "rollback"] as const;
const SECRET = "alice-secret";

/** What the owner has, named in the second user's requests. */
interface Owned {
  thread: string;
  assistant: string;
  run: string;
  checkpoint: string;
  file: string;
  memory: string;
  cron: string;
}

interface Ask {
  body?: unknown;
  query?: Record<string, string>;
}

/**
 * How a second user's request is answered:
 * NOT_FOUND  it names something of the owner's: 404, as if it did not exist
 * OWN_SCOPE  it names nothing but acts on the caller's own (a list, a search, a stateless run): 2xx
 *            or 4xx, and nothing of the owner's in the answer
 * TAKEN      it names an id the owner holds where a new one is created: 409, as for any id in use
 * ADMIN      an administrator's route: 403 for a user
 * PUBLIC     no user at all (the Intercom webhook, signed by Intercom): not the owner's business
 */
type Kind = "NOT_FOUND" | "OWN_SCOPE" | "TAKEN" | "ADMIN" | "PUBLIC";

const thread = (o: Owned) => ({ thread_id: o.thread });
const runBody = (strategy: string) => ({
  assistant_id: "chat",
  input: { messages: [{ type: "human", content: "stop theirs" }] },
  multitask_strategy: strategy,
});

/** Every route, with its kind, its path parameters and the requests a second user sends it. */
const ASKS: Record<
  string,
  {
    kind: Kind;
    params?: (o: Owned) => Record<string, string>;
    asks: (o: Owned) => Ask[];
  }
> = {
  "POST /api/chat": {
    kind: "NOT_FOUND",
    asks: (o) => [
      { body: { message: "hello", session_id: o.thread } },
      { body: { message: "hello", session_id: o.thread, if_busy: "queue" } },
      {
        body: { message: "hello", session_id: o.thread, attachments: [o.file] },
      },
    ],
  },
  "POST /api/chat/stream": {
    kind: "NOT_FOUND",
    asks: (o) => [
      { body: { message: "hello", session_id: o.thread } },
      { body: { message: "hello", session_id: o.thread, if_busy: "queue" } },
    ],
  },
  "GET /api/sessions": { kind: "OWN_SCOPE", asks: () => [{}] },
  "GET /api/sessions/{id}": {
    kind: "NOT_FOUND",
    params: (o) => ({ id: o.thread }),
    asks: () => [{}],
  },
  "GET /api/sessions/{id}/messages": {
    kind: "NOT_FOUND",
    params: (o) => ({ id: o.thread }),
    asks: () => [{}],
  },
  "PATCH /api/sessions/{id}": {
    kind: "NOT_FOUND",
    params: (o) => ({ id: o.thread }),
    asks: () => [
      { body: { settings: { memory: false, private: true } } },
      { body: { approve_tools: "*" } },
      { body: { approve_tools: [], settings: { files: false } } },
    ],
  },
  "DELETE /api/sessions/{id}": {
    kind: "NOT_FOUND",
    params: (o) => ({ id: o.thread }),
    asks: () => [{}],
  },
  "GET /api/memories": {
    kind: "OWN_SCOPE",
    asks: () => [{ query: { superseded: "1" } }],
  },
  "DELETE /api/memories/{id}": {
    kind: "NOT_FOUND",
    params: (o) => ({ id: o.memory }),
    asks: () => [{}],
  },
  "POST /api/sessions/{id}/files": {
    kind: "NOT_FOUND",
    params: (o) => ({ id: o.thread }),
    asks: () => [{ body: { name: "b.csv", media_type: "text/csv", bytes: 5 } }],
  },
  "GET /api/sessions/{id}/files": {
    kind: "NOT_FOUND",
    params: (o) => ({ id: o.thread }),
    asks: () => [{}],
  },
  "DELETE /api/sessions/{id}/files/{file_id}": {
    kind: "NOT_FOUND",
    params: (o) => ({ id: o.thread, file_id: o.file }),
    asks: () => [{}],
  },
  "POST /api/sessions/{id}/files/{file_id}/complete": {
    kind: "NOT_FOUND",
    params: (o) => ({ id: o.thread, file_id: o.file }),
    asks: () => [{}],
  },
  "GET /api/files/{file_id}": {
    kind: "NOT_FOUND",
    params: (o) => ({ file_id: o.file }),
    asks: () => [{}],
  },
  // The caller's own data: nothing of anyone else's is named, shown or erased (docs/user-data.md).
  "GET /api/me/usage": { kind: "OWN_SCOPE", asks: () => [{}] },
  "GET /api/me/export": { kind: "OWN_SCOPE", asks: () => [{}] },
  "DELETE /api/me": { kind: "OWN_SCOPE", asks: () => [{}] },
  "DELETE /api/admin/users/{id}": { kind: "ADMIN", params: () => ({ id: "alice" }), asks: () => [{}] },
  "GET /api/knowledge/documents": { kind: "ADMIN", asks: () => [{}] },
  "GET /api/knowledge/documents/{source}": {
    kind: "ADMIN",
    params: () => ({ source: "x.md" }),
    asks: () => [{}],
  },
  "DELETE /api/knowledge/documents/{source}": {
    kind: "ADMIN",
    params: () => ({ source: "x.md" }),
    asks: () => [{}],
  },
  "POST /api/knowledge/uploads": {
    kind: "ADMIN",
    asks: () => [{ body: { source: "x.md", bytes: 3 } }],
  },
  "GET /api/knowledge/search": {
    kind: "ADMIN",
    asks: () => [{ query: { q: "pricing" } }],
  },
  "GET /api/health/deep": { kind: "OWN_SCOPE", asks: () => [{}] },
  "GET /ok": { kind: "OWN_SCOPE", asks: () => [{}] },
  "GET /info": { kind: "OWN_SCOPE", asks: () => [{}] },
  "POST /assistants": {
    // Assistants are each user's own (a partition per user): a new one is the caller's. (The same id
    // in another user's request names that user's own: the conformance tests show it.)
    kind: "OWN_SCOPE",
    asks: () => [{ body: { graph_id: "chat", name: "bob's" } }],
  },
  "POST /assistants/search": { kind: "OWN_SCOPE", asks: () => [{ body: {} }, { body: { name: SECRET } }] },
  "POST /assistants/count": { kind: "OWN_SCOPE", asks: () => [{ body: {} }] },
  "GET /assistants/{assistant_id}": {
    kind: "NOT_FOUND",
    params: (o) => ({ assistant_id: o.assistant }),
    asks: () => [{}],
  },
  "PATCH /assistants/{assistant_id}": {
    kind: "NOT_FOUND",
    params: (o) => ({ assistant_id: o.assistant }),
    asks: () => [{ body: { metadata: { owner: "bob" }, config: { configurable: { approve_tools: [] } } } }],
  },
  "DELETE /assistants/{assistant_id}": {
    kind: "NOT_FOUND",
    params: (o) => ({ assistant_id: o.assistant }),
    asks: () => [{ query: { delete_threads: "true" } }, {}],
  },
  "POST /assistants/{assistant_id}/versions": {
    kind: "NOT_FOUND",
    params: (o) => ({ assistant_id: o.assistant }),
    asks: () => [{ body: {} }],
  },
  "POST /assistants/{assistant_id}/latest": {
    kind: "NOT_FOUND",
    params: (o) => ({ assistant_id: o.assistant }),
    asks: () => [{ body: { version: 1 } }],
  },
  "GET /assistants/{assistant_id}/graph": {
    kind: "NOT_FOUND",
    params: (o) => ({ assistant_id: o.assistant }),
    asks: () => [{}],
  },
  "GET /assistants/{assistant_id}/schemas": {
    kind: "NOT_FOUND",
    params: (o) => ({ assistant_id: o.assistant }),
    asks: () => [{}],
  },
  "POST /threads": {
    kind: "TAKEN",
    asks: (o) => [
      { body: { thread_id: o.thread } },
      {
        body: {
          thread_id: o.thread,
          if_exists: "do_nothing",
          metadata: { topic: "mine now" },
        },
      },
    ],
  },
  "POST /threads/search": {
    kind: "OWN_SCOPE",
    asks: (o) => [{ body: { ids: [o.thread] } }, { body: {} }],
  },
  "POST /threads/count": {
    kind: "OWN_SCOPE",
    asks: () => [{ body: {} }, { body: { metadata: { topic: `${SECRET}-topic` } } }],
  },
  "GET /threads/{thread_id}": {
    kind: "NOT_FOUND",
    params: thread,
    asks: () => [{}],
  },
  "POST /threads/{thread_id}/copy": {
    kind: "NOT_FOUND",
    params: thread,
    asks: () => [{}],
  },
  "POST /threads/{thread_id}/state": {
    kind: "NOT_FOUND",
    params: thread,
    asks: () => [
      { body: { values: { messages: [{ type: "ai", content: "bob was here" }] } } },
      { body: { values: { messages: [{ type: "ai", content: "bob was here" }] }, as_node: "agent" } },
    ],
  },
  "POST /threads/{thread_id}/state/checkpoint": {
    kind: "NOT_FOUND",
    params: thread,
    asks: (o) => [{ body: { checkpoint: { checkpoint_id: o.checkpoint } } }],
  },
  "PATCH /threads/{thread_id}": {
    kind: "NOT_FOUND",
    params: thread,
    asks: () => [{ body: { metadata: { topic: "bob was here" } } }],
  },
  "DELETE /threads/{thread_id}": {
    kind: "NOT_FOUND",
    params: thread,
    asks: () => [{}],
  },
  "GET /threads/{thread_id}/state": {
    kind: "NOT_FOUND",
    params: thread,
    asks: () => [{}],
  },
  "GET /threads/{thread_id}/state/{checkpoint_id}": {
    kind: "NOT_FOUND",
    params: (o) => ({ thread_id: o.thread, checkpoint_id: o.checkpoint }),
    asks: () => [{}],
  },
  "POST /threads/{thread_id}/history": {
    kind: "NOT_FOUND",
    params: thread,
    asks: () => [{ body: { limit: 5 } }],
  },
  "POST /threads/{thread_id}/runs/wait": {
    kind: "NOT_FOUND",
    params: thread,
    // A run asking for its thread to be made when absent does not make anyone else's its caller's.
    asks: () => [
      ...STRATEGIES.map((s) => ({ body: runBody(s) })),
      { body: { ...runBody("reject"), if_not_exists: "create" } },
    ],
  },
  "POST /threads/{thread_id}/runs/stream": {
    kind: "NOT_FOUND",
    params: thread,
    asks: () => [
      ...STRATEGIES.map((s) => ({ body: runBody(s) })),
      { body: { ...runBody("reject"), if_not_exists: "create" } },
    ],
  },
  "GET /threads/{thread_id}/runs/{run_id}": {
    kind: "NOT_FOUND",
    params: (o) => ({ thread_id: o.thread, run_id: o.run }),
    asks: () => [{}],
  },
  "POST /threads/{thread_id}/runs/{run_id}/cancel": {
    kind: "NOT_FOUND",
    params: (o) => ({ thread_id: o.thread, run_id: o.run }),
    asks: () => [{ query: { action: "interrupt" } }, { query: { action: "rollback" } }],
  },
  // Background runs, their joins and the thread's crons (issue 29): the thread's owner's only.
  "POST /threads/{thread_id}/runs": {
    kind: "NOT_FOUND",
    params: thread,
    asks: () => [
      ...STRATEGIES.map((s) => ({ body: runBody(s) })),
      { body: { ...runBody("reject"), if_not_exists: "create" } },
      { body: { ...runBody("enqueue"), after_seconds: 1 } },
    ],
  },
  "GET /threads/{thread_id}/runs": {
    kind: "NOT_FOUND",
    params: thread,
    asks: () => [{}, { query: { status: "running" } }],
  },
  "DELETE /threads/{thread_id}/runs/{run_id}": {
    kind: "NOT_FOUND",
    params: (o) => ({ thread_id: o.thread, run_id: o.run }),
    asks: () => [{}],
  },
  "GET /threads/{thread_id}/runs/{run_id}/join": {
    kind: "NOT_FOUND",
    params: (o) => ({ thread_id: o.thread, run_id: o.run }),
    asks: () => [{}],
  },
  "GET /threads/{thread_id}/runs/{run_id}/stream": {
    kind: "NOT_FOUND",
    params: (o) => ({ thread_id: o.thread, run_id: o.run }),
    asks: () => [{}, { query: { cancel_on_disconnect: "1" } }],
  },
  "POST /threads/{thread_id}/runs/crons": {
    kind: "NOT_FOUND",
    params: thread,
    asks: () => [{ body: { ...runBody("enqueue"), schedule: "* * * * *" } }],
  },
  "POST /runs/crons": { kind: "OWN_SCOPE", asks: () => [{ body: { ...runBody("enqueue"), schedule: "* * * * *" } }] },
  "POST /runs/crons/search": { kind: "OWN_SCOPE", asks: (o) => [{ body: {} }, { body: { thread_id: o.thread } }] },
  "POST /runs/crons/count": { kind: "OWN_SCOPE", asks: (o) => [{ body: { thread_id: o.thread } }] },
  "PATCH /runs/crons/{cron_id}": {
    kind: "NOT_FOUND",
    params: (o) => ({ cron_id: o.cron }),
    asks: () => [{ body: { schedule: "* * * * *" } }, { body: { enabled: false } }],
  },
  "DELETE /runs/crons/{cron_id}": {
    kind: "NOT_FOUND",
    params: (o) => ({ cron_id: o.cron }),
    asks: () => [{}],
  },
  "POST /runs/wait": {
    kind: "OWN_SCOPE",
    asks: () => STRATEGIES.map((s) => ({ body: runBody(s) })),
  },
  "POST /runs/stream": {
    kind: "OWN_SCOPE",
    asks: () => [{ body: runBody("reject") }],
  },
  "PUT /store/items": {
    kind: "NOT_FOUND",
    asks: () => [
      {
        body: {
          namespace: ["memories", "alice"],
          key: "pet",
          value: { content: "bob's cat" },
        },
      },
    ],
  },
  "GET /store/items": {
    kind: "NOT_FOUND",
    asks: () => [{ query: { namespace: "memories.alice", key: "pet" } }],
  },
  "DELETE /store/items": {
    kind: "NOT_FOUND",
    asks: () => [{ body: { namespace: ["memories", "alice"], key: "pet" } }],
  },
  "POST /store/items/search": {
    kind: "NOT_FOUND",
    asks: () => [{ body: { namespace_prefix: ["memories", "alice"] } }],
  },
  "POST /store/namespaces": {
    kind: "OWN_SCOPE",
    asks: () => [{ body: {} }, { body: { prefix: ["memories", "alice"] } }],
  },
  "POST /webhooks/intercom": {
    kind: "PUBLIC",
    asks: () => [{ body: { type: "notification_event" } }],
  },
  "HEAD /webhooks/intercom": { kind: "PUBLIC", asks: () => [{}] },
};

/** Path parameters that name something a user owns; the others (assistant ids, document sources) do not. */
const OWNED_PARAMS = ["id", "thread_id", "run_id", "checkpoint_id", "file_id", "assistant_id", "cron_id"];

interface Answer {
  route: string;
  status: number;
  text: string;
}

async function call(user: string, method: string, path: string, ask: Ask = {}): Promise<Answer> {
  const query = ask.query ? `?${new URLSearchParams(ask.query)}` : "";
  const res = await fetch(`${url()}${path}${query}`, {
    method,
    headers: { "x-user-id": user, "content-type": "application/json" },
    body: ask.body === undefined ? undefined : JSON.stringify(ask.body),
  });
  return {
    route: `${method} ${path}`,
    status: res.status,
    text: await res.text(),
  };
}

const asAlice = async (method: string, path: string, body?: unknown) => {
  const answer = await call("alice", method, path, { body });
  expect(answer.status, answer.text).toBeLessThan(300);
  return answer.text ? JSON.parse(answer.text) : undefined;
};

/** Every request the second user sends, each route with each of its asks. */
function barrage(owned: Owned): Promise<(Answer & { kind: Kind })[]> {
  return Promise.all(
    holder.stack.routes.flatMap(({ method, resource }) => {
      const spec = ASKS[`${method} ${resource}`]!;
      const params = spec.params?.(owned) ?? {};
      const path = resource.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name]!));
      return spec.asks(owned).map(async (ask) => ({
        ...(await call("bob", method, path, ask)),
        kind: spec.kind,
      }));
    }),
  );
}

/** The answers that break the rule of their kind, listed together so one run shows them all. */
function wrongAnswers(answers: (Answer & { kind: Kind })[]): string[] {
  const expected: Partial<Record<Kind, number>> = {
    NOT_FOUND: 404,
    TAKEN: 409,
    ADMIN: 403,
  };
  return answers
    .filter(
      (a) =>
        (expected[a.kind] !== undefined && a.status !== expected[a.kind]) ||
        a.status >= 500 ||
        // Nothing of the owner's is read back to the second user.
        a.text.includes(SECRET),
    )
    .map((a) => `${a.kind} ${a.route} → ${a.status} ${a.text.slice(0, 160)}`);
}

let dynamo: DynamoDBClient;
let table: string;

/** Everything stored of the owner's: their items in DynamoDB, their objects on disk, and what they read back. */
async function ownersWorld(owned: Owned) {
  const items: string[] = [];
  let start: Record<string, never> | undefined;
  const ours = [owned.thread, "threads#alice", "assistants#alice", "crons#alice", `file#${owned.file}`];
  do {
    const page = await dynamo.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start }));
    for (const item of page.Items ?? []) if (ours.includes(item.pk!.S!)) items.push(JSON.stringify(item));
    start = page.LastEvaluatedKey as typeof start;
  } while (start);
  const objects: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else objects.push(`${path}:${statSync(path).size}`);
    }
  };
  walk(join(localStackDataDir(holder.stack), "attachments"));
  return {
    items: items.sort(),
    objects: objects.sort(),
    messages: await asAlice("GET", `/api/sessions/${owned.thread}/messages`),
    memories: await asAlice("GET", "/api/memories?superseded=1"),
    thread: await asAlice("GET", `/threads/${owned.thread}`),
    files: await asAlice("GET", `/api/sessions/${owned.thread}/files`),
    item: await asAlice("GET", "/store/items?namespace=memories.alice&key=pet"),
    assistant: await asAlice("GET", `/assistants/${owned.assistant}`),
    versions: await asAlice("POST", `/assistants/${owned.assistant}/versions`, {}),
    crons: await asAlice("POST", "/runs/crons/search", {}),
  };
}

let owned: Owned;

beforeAll(async () => {
  ({ client: dynamo, table } = localStackDynamo(holder.stack));
  const created = await asAlice("POST", "/threads", {
    metadata: { topic: `${SECRET}-topic` },
  });
  const threadId: string = created.thread_id;
  const res = await fetch(`${url()}/threads/${threadId}/runs/wait`, {
    method: "POST",
    headers: { "x-user-id": "alice", "content-type": "application/json" },
    body: JSON.stringify({
      assistant_id: "chat",
      input: { messages: [{ type: "human", content: `${SECRET} hi` }] },
    }),
  });
  expect(res.status).toBe(200);
  const run = res.headers.get("content-location")!.split("/").at(-1)!;
  const state = await asAlice("GET", `/threads/${threadId}/state`);
  const file = await asAlice("POST", `/api/sessions/${threadId}/files`, {
    name: "a.csv",
    media_type: "text/csv",
    bytes: 8,
  });
  const put = await fetch(file.upload_url, {
    method: "PUT",
    headers: file.headers,
    body: "a,b\n1,2\n",
  });
  expect(put.status).toBe(200);
  await asAlice("POST", `/api/sessions/${threadId}/files/${file.file_id}/complete`);
  await asAlice("PUT", "/store/items", {
    namespace: ["memories", "alice"],
    key: "pet",
    value: { content: `${SECRET}: my dog is called Rex` },
  });
  const memories = await asAlice("GET", "/api/memories");
  const assistant = await asAlice("POST", "/assistants", {
    graph_id: "chat",
    name: `${SECRET} planner`,
    config: { configurable: { system_prompt: `${SECRET}: plan trips` } },
  });
  const cron = await asAlice("POST", `/threads/${threadId}/runs/crons`, {
    assistant_id: "chat",
    schedule: "0 9 * * 1",
    input: { messages: [{ type: "human", content: `${SECRET}: weekly review` }] },
  });
  owned = {
    cron: cron.cron_id,
    thread: threadId,
    assistant: assistant.assistant_id,
    run,
    checkpoint: state.checkpoint.checkpoint_id,
    file: file.file_id,
    memory: memories.memories.find((m: { content: string }) => m.content.includes("Rex")).id,
  };
}, 60_000);
afterAll(() => dynamo?.destroy());

describe("a second user, on every route", () => {
  it("covers every route the stack serves, and every route naming something owned answers 404", () => {
    const served = holder.stack.routes.map((r) => `${r.method} ${r.resource}`);
    expect(
      served.filter((r) => !(r in ASKS)),
      "routes without a line in ASKS",
    ).toEqual([]);
    expect(
      Object.keys(ASKS).filter((r) => !served.includes(r)),
      "lines for routes no longer served",
    ).toEqual([]);
    for (const route of served) {
      const named = [...route.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
      if (named.some((p) => OWNED_PARAMS.includes(p)) && ASKS[route]!.kind !== "ADMIN")
        expect(ASKS[route]!.kind, route).toBe("NOT_FOUND");
    }
  });

  it("gets 404 and changes nothing of an idle thread's", async () => {
    const before = await ownersWorld(owned);
    expect(wrongAnswers(await barrage(owned))).toEqual([]);
    expect(await ownersWorld(owned)).toEqual(before);
  }, 60_000);

  it("gets 404 and neither stops nor rolls back the owner's running turn, whatever its multitask strategy", async () => {
    const stream = await fetch(`${url()}/threads/${owned.thread}/runs/stream`, {
      method: "POST",
      headers: { "x-user-id": "alice", "content-type": "application/json" },
      body: JSON.stringify({
        assistant_id: "chat",
        input: { messages: [{ type: "human", content: "hi" }] },
        stream_mode: ["messages-tuple", "values"],
      }),
    });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    let text = "";
    // The barrage starts once the owner's run is answering (its first token).
    while (!text.includes("event: messages")) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    const runId = /"run_id":"([^"]+)"/.exec(text)![1]!;
    const answers = await barrage({ ...owned, run: runId });
    const running = await asAlice("GET", `/threads/${owned.thread}/runs/${runId}`);
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(running.status).toBe("running");
    expect(text).not.toContain("event: error");
    expect((await asAlice("GET", `/threads/${owned.thread}/runs/${runId}`)).status).toBe("success");
    const messages = (await asAlice("GET", `/threads/${owned.thread}/state`)).values.messages;
    expect(messages.map((m: { type: string }) => m.type)).toEqual(["human", "ai", "human", "ai"]);
    const transcript = await asAlice("GET", `/api/sessions/${owned.thread}/messages`);
    expect(transcript.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(wrongAnswers(answers)).toEqual([]);
  }, 60_000);
});
