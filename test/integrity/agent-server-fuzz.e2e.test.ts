import fc from "fast-check";
import { localStackForTests } from "../support/local-stack";
import { type RawReply, requestAs } from "../support/raw-request";

// A property-based pass over the request schemas of the Agent Server API (runs, threads, store)
// and the session settings, on the local stack: hostile bodies shaped like the real ones (lone
// surrogates, NUL, numbers DynamoDB cannot store, nesting past 32 levels, hundreds of KB, wrong
// types, ids of someone else's or of nothing) always get a 2xx or a 4xx with an error code, never a
// 5xx; afterwards the stack still answers and the owner's thread still takes turns (a value stored
// that later turns cannot read would make them fail).

const holder = localStackForTests("agent-server-fuzz", {
  OFFLINE_STREAM_DELAY_MS: "0",
});

type Reply = RawReply;

const send = (user: string, method: string, path: string, body?: string) =>
  requestAs(holder.stack.url, user, method, path, body);

// ---- values ---------------------------------------------------------------------------------

const nest = (depth: number, leaf: unknown): unknown => (depth === 0 ? leaf : { a: nest(depth - 1, leaf) });
const text = fc.oneof(
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.string({ maxLength: 30 }),
  fc.constantFrom("x\ud800", "\udc00y", "a\u0000b", "", "   ", "memories", "chat", "hi", "n.o.d.o.t.s"),
  fc.nat({ max: 3000 }).map((n) => "é".repeat(n)),
);
const number = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constantFrom(1e300, -1e300, 5e-324, -5e-324, 2 ** 53, -(2 ** 53), 2 ** 53 - 1, 1e-130, 1e-131, 0, -1),
);
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    text,
    number,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(text, tie("value"), { maxKeys: 3 }),
  ),
})).value;
/** Anything a field could be sent as. */
const any = fc.oneof(
  text,
  number,
  json,
  fc.integer({ min: 30, max: 36 }).map((d) => nest(d, 1)),
  fc.constant(undefined),
);
/** A JSON object of hostile metadata: big, deep, unstorable numbers and text. */
const metadata = fc.oneof(
  fc.dictionary(text, fc.oneof(number, text, json), { maxKeys: 4 }),
  fc.integer({ min: 28, max: 36 }).map((d) => ({ deep: nest(d, "x") })),
  fc.nat({ max: 400_000 }).map((n) => ({ big: "m".repeat(n) })),
  any,
);

// ---- bodies ---------------------------------------------------------------------------------

/** Mostly a valid value, sometimes anything: so most requests get past the first field and reach deep. */
const mostly = <T>(valid: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: valid, weight: 6 }, { arbitrary: any as fc.Arbitrary<unknown>, weight: 1 });
/** Metadata: usually small and valid, sometimes hostile (big, deep, numbers DynamoDB refuses). */
const someMetadata = fc.oneof(
  {
    arbitrary: fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.oneof(fc.integer(), fc.string())),
    weight: 3,
  },
  { arbitrary: metadata, weight: 2 },
);

const STRATEGIES = ["reject", "enqueue", "interrupt", "rollback"];
const message = fc.record(
  {
    type: mostly(fc.constantFrom("human", "user", "ai")),
    content: mostly(
      fc.oneof(
        fc.constantFrom("hi", "remember that my tea is green", "what do you know about me?"),
        text,
        fc.array(fc.record({ type: fc.constantFrom("text", "image_url"), text }), { maxLength: 3 }),
      ),
    ),
    id: mostly(fc.oneof(fc.uuid(), text, fc.constantFrom("fixed-id", "x\ud800"))),
  },
  { requiredKeys: ["content"] },
);
const wildRun = fc.record(
  {
    assistant_id: mostly(fc.constantFrom("chat", "chat", "chat", "support", "nope")),
    input: mostly(fc.record({ messages: mostly(fc.array(message, { minLength: 1, maxLength: 2 })) })),
    metadata: someMetadata,
    multitask_strategy: mostly(fc.constantFrom(...STRATEGIES)),
    stream_mode: mostly(
      fc.oneof(
        fc.constantFrom("values", "updates", "messages-tuple", "custom", "debug"),
        fc.array(fc.constantFrom("values", "messages-tuple", "events"), { maxLength: 3 }),
      ),
    ),
    config: mostly(fc.record({ configurable: fc.record({ project_id: mostly(text) }) })),
    command: any,
    on_completion: mostly(fc.constantFrom("delete", "keep")),
  },
  { requiredKeys: ["assistant_id", "input"] },
);
/** Sets a value at a dotted path ("input.messages.0.id") of a JSON body. */
function setAt(body: Record<string, unknown>, path: string, value: unknown) {
  const keys = path.split(".");
  let at = body as Record<string, unknown>;
  for (const key of keys.slice(0, -1)) {
    if (typeof at[key] !== "object" || at[key] === null) at[key] = {};
    at = at[key] as Record<string, unknown>;
  }
  at[keys.at(-1)!] = value;
}

/** A valid body with at most one field made hostile: most requests then reach the handler's far end. */
const oneHostile = (valid: fc.Arbitrary<Record<string, unknown>>, fields: Record<string, fc.Arbitrary<unknown>>) =>
  fc
    .tuple(
      valid,
      fc.option(
        fc.constantFrom(...Object.entries(fields)).chain(([path, arb]) => arb.map((v) => [path, v] as const)),
        { nil: undefined, freq: 3 },
      ),
    )
    .map(([body, change]) => {
      if (change) setAt(body, change[0], change[1]);
      return body;
    });

const validRun = fc.record(
  {
    assistant_id: fc.constant("chat"),
    input: fc.record({
      messages: fc.tuple(
        fc.record(
          {
            type: fc.constant("human"),
            content: fc.oneof(
              fc.constantFrom("hi", "remember that my tea is green", "what do you know about me?", "I like hiking"),
              fc.string({ unit: "grapheme", minLength: 1, maxLength: 60 }),
            ),
            id: fc.uuid(),
          },
          { requiredKeys: ["type", "content"] },
        ),
      ),
    }),
    metadata: fc.dictionary(
      fc.string({ minLength: 1, maxLength: 8 }),
      fc.oneof(fc.integer(), fc.string({ maxLength: 20 })),
    ),
    multitask_strategy: fc.constantFrom(...STRATEGIES),
    stream_mode: fc.constantFrom(
      "values",
      "updates",
      "messages-tuple",
      "messages",
      "custom",
      "events",
      "debug",
      "tasks",
      "checkpoints",
    ),
    on_completion: fc.constantFrom("delete", "keep"),
    interrupt_before: fc.constantFrom(["agent"], ["tools"], "*"),
    interrupt_after: fc.constantFrom(["agent"], ["tools"]),
    if_not_exists: fc.constantFrom("create", "reject"),
    config: fc.record({ recursion_limit: fc.integer({ min: 1, max: 30 }) }),
  },
  { requiredKeys: ["assistant_id", "input"] },
);
/** A message written into the state (updateState, a command's update, supersteps). */
const stateMessage = fc.record(
  {
    type: mostly(fc.constantFrom("human", "ai", "tool", "system", "remove")),
    content: mostly(fc.oneof(fc.constantFrom("edited", "One must imagine Sisyphus happy."), text)),
    id: mostly(fc.oneof(fc.uuid(), text)),
    tool_call_id: mostly(text),
    tool_calls: mostly(
      fc.array(fc.record({ name: mostly(text), args: mostly(json), id: mostly(text) }), { maxLength: 2 }),
    ),
  },
  { requiredKeys: [] },
);
const stateValues = mostly(
  fc.record(
    { messages: mostly(fc.array(stateMessage, { maxLength: 3 })), summary: mostly(text), tokenRatio: mostly(number) },
    { requiredKeys: [] },
  ),
);
const stateFields = {
  values: stateValues,
  as_node: mostly(fc.oneof(fc.constantFrom("agent", "tools", "compact", "__start__", "__input__", "nowhere"), text)),
  supersteps: mostly(
    fc.array(fc.record({ updates: mostly(fc.array(fc.record({ values: stateValues, as_node: mostly(text) }))) }), {
      maxLength: 3,
    }),
  ),
  subgraphs: any,
};
/**
 * A state write: usually at the latest checkpoint, else at a generated one (a random id is not the
 * thread's, and is 404), so writes that can land are generated as often as hostile ones.
 */
const stateBody = fc.oneof(
  { arbitrary: fc.record(stateFields, { requiredKeys: [] }), weight: 3 },
  {
    arbitrary: fc.record(
      {
        ...stateFields,
        checkpoint_id: mostly(fc.oneof(fc.uuid(), text)),
        checkpoint: mostly(
          fc.record({ checkpoint_id: mostly(fc.oneof(fc.uuid(), text)), checkpoint_ns: mostly(text) }),
        ),
      },
      { requiredKeys: [] },
    ),
    weight: 1,
  },
);
/** An assistant: a graph and its configuration, valid but for at most one hostile field. */
const validAssistant = fc.record(
  {
    graph_id: fc.constant("chat"),
    name: fc.string({ minLength: 1, maxLength: 20 }),
    description: fc.string({ maxLength: 20 }),
    metadata: fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.oneof(fc.integer(), fc.string())),
    config: fc.record(
      {
        configurable: fc.record(
          {
            system_prompt: fc.string({ minLength: 1, maxLength: 60 }),
            settings: fc.record({ memory: fc.boolean(), private: fc.boolean() }, { requiredKeys: [] }),
            approve_tools: fc.oneof(fc.constant("*"), fc.constantFrom(["store_memory"], [])),
          },
          { requiredKeys: [] },
        ),
      },
      { requiredKeys: [] },
    ),
    if_exists: fc.constantFrom("raise", "do_nothing"),
    version: fc.integer({ min: 1, max: 3 }),
    limit: fc.integer({ min: 1, max: 50 }),
  },
  { requiredKeys: ["graph_id"] },
);
const assistantBody = oneHostile(validAssistant, {
  graph_id: fc.oneof(fc.constantFrom("support", "nope"), any),
  assistant_id: fc.oneof(fc.uuid(), fc.constantFrom("chat", "OWNED", "THEIRS"), text, any),
  name: fc.oneof(text, any),
  description: fc.oneof(text, any),
  metadata,
  context: metadata,
  config: any,
  "config.configurable.system_prompt": fc.oneof(text, any),
  "config.configurable.model": fc.oneof(text, any),
  "config.configurable.settings": any,
  "config.configurable.approve_tools": any,
  "config.recursion_limit": fc.oneof(fc.integer({ min: -5, max: 500 }), any),
  version: any,
  limit: any,
  sort_by: any,
});
/** A run that resumes, updates or jumps: a command, from a checkpoint, with nothing new. */
const commandRun = fc.record(
  {
    assistant_id: fc.constant("chat"),
    input: mostly(fc.constantFrom(null, {})),
    command: mostly(
      fc.record(
        {
          resume: json,
          update: mostly(fc.oneof(stateValues, fc.array(fc.tuple(text, json), { maxLength: 2 }))),
          goto: mostly(fc.oneof(fc.constantFrom("agent", "tools", "__end__", "nowhere"), fc.array(text))),
        },
        { requiredKeys: [] },
      ),
    ),
    checkpoint: mostly(fc.record({ checkpoint_id: mostly(fc.oneof(fc.uuid(), text)) })),
    checkpoint_id: mostly(fc.oneof(fc.uuid(), text)),
    interrupt_before: any,
    interrupt_after: any,
    config: mostly(fc.record({ recursion_limit: mostly(fc.integer({ min: -5, max: 10_000 })) })),
    stream_mode: mostly(fc.constantFrom("events", "debug", "messages", "checkpoints", "tasks")),
  },
  { requiredKeys: ["assistant_id"] },
);
const runBody = fc.oneof(
  {
    weight: 3,
    arbitrary: oneHostile(validRun, {
      assistant_id: any,
      metadata,
      "input.messages.0.id": fc.oneof(text, any, fc.constant("fixed-id")),
      "input.messages.0.content": fc.oneof(text, any),
      "input.messages.0.type": any,
      "input.messages": any,
      multitask_strategy: any,
      stream_mode: any,
      "config.configurable.project_id": fc.oneof(text, any),
      command: any,
      on_completion: any,
      interrupt_before: any,
      interrupt_after: any,
      if_not_exists: any,
      checkpoint: any,
      "config.recursion_limit": any,
    }),
  },
  { weight: 1, arbitrary: wildRun },
  { weight: 1, arbitrary: commandRun },
);
const threadBody = fc.record(
  {
    thread_id: mostly(fc.oneof(fc.uuid(), fc.constantFrom("OWNED", "THEIRS"))),
    metadata: someMetadata,
    if_exists: mostly(fc.constantFrom("raise", "do_nothing")),
    ids: mostly(fc.array(fc.oneof(fc.uuid(), text), { maxLength: 3 })),
    status: mostly(fc.constantFrom("idle", "busy")),
    limit: mostly(fc.integer({ min: -5, max: 2000 })),
    offset: mostly(fc.integer({ min: -5, max: 2000 })),
    sort_by: mostly(fc.constantFrom("thread_id", "created_at")),
    sort_order: mostly(fc.constantFrom("asc", "desc")),
    before: mostly(fc.record({ configurable: fc.record({ checkpoint_id: fc.oneof(fc.uuid(), text) }) })),
  },
  { requiredKeys: [] },
);
/** A namespace: SELF is the caller's own id, replaced before sending. */
const namespace = mostly(
  fc.oneof(
    fc.constantFrom(["memories", "SELF"], ["memories", "SELF", "work"], ["memories"], []),
    fc.array(fc.oneof(fc.constantFrom("memories", "SELF", "alice", "bob", "a%2Eb"), text), { maxLength: 4 }),
  ),
);
const wildStore = fc.record(
  {
    namespace,
    namespace_prefix: namespace,
    prefix: namespace,
    key: mostly(fc.oneof(fc.constantFrom("pet", "k"), text)),
    value: mostly(
      fc.record(
        {
          content: mostly(fc.oneof(fc.constantFrom("likes tea"), text)),
          category: mostly(text),
          tags: mostly(fc.array(text)),
        },
        { requiredKeys: ["content"] },
      ),
    ),
    filter: someMetadata,
    query: mostly(text),
    limit: mostly(fc.integer({ min: -5, max: 2000 })),
    offset: mostly(fc.integer({ min: -5, max: 20_000 })),
    max_depth: mostly(fc.integer({ min: -1, max: 5 })),
  },
  { requiredKeys: [] },
);
const validStore = fc.record(
  {
    namespace: fc.constantFrom(["memories", "SELF"], ["memories", "SELF", "work"]),
    namespace_prefix: fc.constantFrom(["memories", "SELF"], ["memories"], []),
    key: fc.oneof(fc.constantFrom("pet", "k"), fc.string({ minLength: 1, maxLength: 20 })),
    value: fc.record(
      {
        content: fc.constantFrom("likes tea", "flies to Lisbon"),
        tags: fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }),
      },
      { requiredKeys: ["content"] },
    ),
    filter: fc.constantFrom({ content: "likes tea" }, { tags: [] }, {}),
    limit: fc.integer({ min: 1, max: 100 }),
    offset: fc.integer({ min: 0, max: 300 }),
  },
  { requiredKeys: ["namespace", "key", "value"] },
);
const storeBody = fc.oneof(
  {
    weight: 3,
    arbitrary: oneHostile(validStore, {
      namespace,
      "namespace.1": fc.oneof(text, any, fc.constantFrom("alice", "bob", "a%2Eb")),
      namespace_prefix: namespace,
      key: fc.oneof(text, any),
      "value.content": fc.oneof(text, any),
      "value.category": fc.oneof(text, any),
      "value.tags": any,
      value: any,
      filter: metadata,
      query: fc.oneof(text, any),
      limit: any,
      offset: fc.oneof(fc.integer({ min: -5, max: 20_000 }), any),
    }),
  },
  { weight: 1, arbitrary: wildStore },
);
const settingsBody = fc.record(
  {
    settings: mostly(
      fc.dictionary(
        fc.constantFrom("memory", "knowledge", "user_context", "files", "private", "memmory"),
        mostly(fc.boolean()),
        { maxKeys: 4 },
      ),
    ),
    extra: any,
  },
  { requiredKeys: ["settings"] },
);
/** Bodies JSON cannot write from values: numbers past a double, broken JSON, non-objects. */
const rawBody = fc.constantFrom(
  '{"assistant_id":"chat","input":{"messages":[{"content":"hi"}]},"metadata":{"n":1e999}}',
  '{"metadata":{"n":-1e999,"m":1e-999}}',
  '{"namespace":["memories","alice"],"key":"k","value":{"content":"hi"},"filter":{"n":1e999}}',
  '{"settings":{"memory":1e999}}',
  '{"assistant_id":"chat","input":{"messages":[{"content":"hi","id":"\\ud800"}]}}',
  "",
  "null",
  "[]",
  "{",
  '"text"',
);

// ---- requests -------------------------------------------------------------------------------

/** Ids a path may name: the owner's, someone else's, unknown, malformed. */
const pathId = fc.oneof(
  { arbitrary: fc.constant("OWNED"), weight: 4 },
  { arbitrary: fc.constantFrom("THEIRS", "UNKNOWN", "not-a-uuid", "%ED%A0%80", "..."), weight: 2 },
);
const user = fc.oneof(
  { arbitrary: fc.constant("alice"), weight: 4 },
  { arbitrary: fc.constantFrom("bob", "a.b"), weight: 1 },
);
const queryText = fc.oneof(
  fc.string({ maxLength: 20 }).map(encodeURIComponent),
  fc
    .array(fc.integer({ min: 0, max: 255 }), { maxLength: 6 })
    .map((b) => b.map((x) => `%${x.toString(16).padStart(2, "0")}`).join("")),
  fc.constantFrom("memories.alice", "memories.alice.work", "memories.a.b", "memories.a%252Eb", ""),
);

type Req = {
  method: string;
  path: string;
  body?: fc.Arbitrary<unknown>;
  query?: fc.Arbitrary<string>;
};
const ROUTES: Req[] = [
  { method: "POST", path: "/threads/{id}/runs/wait", body: runBody },
  { method: "POST", path: "/runs/wait", body: runBody },
  { method: "POST", path: "/threads/{id}/runs/stream", body: runBody },
  { method: "POST", path: "/runs/stream", body: runBody },
  {
    method: "POST",
    path: "/threads/{id}/runs/{id}/cancel",
    query: fc.oneof(fc.constantFrom("action=interrupt", "action=rollback", "action=x", "wait=1"), queryText),
  },
  { method: "POST", path: "/threads", body: threadBody },
  { method: "POST", path: "/threads/search", body: threadBody },
  { method: "PATCH", path: "/threads/{id}", body: threadBody },
  { method: "POST", path: "/threads/{id}/history", body: threadBody },
  { method: "GET", path: "/threads/{id}/state/{id}" },
  { method: "POST", path: "/threads/{id}/state", body: stateBody },
  { method: "POST", path: "/threads/{id}/state/checkpoint", body: stateBody },
  { method: "POST", path: "/threads/{id}/copy" },
  { method: "POST", path: "/threads/count", body: threadBody },
  { method: "POST", path: "/threads", body: stateBody },
  { method: "POST", path: "/assistants", body: assistantBody },
  { method: "POST", path: "/assistants/search", body: assistantBody },
  { method: "POST", path: "/assistants/count", body: assistantBody },
  { method: "PATCH", path: "/assistants/{id}", body: assistantBody },
  { method: "POST", path: "/assistants/{id}/versions", body: assistantBody },
  { method: "POST", path: "/assistants/{id}/latest", body: assistantBody },
  { method: "DELETE", path: "/assistants/{id}" },
  { method: "PUT", path: "/store/items", body: storeBody },
  { method: "DELETE", path: "/store/items", body: storeBody },
  { method: "POST", path: "/store/items/search", body: storeBody },
  { method: "POST", path: "/store/namespaces", body: storeBody },
  {
    method: "GET",
    path: "/store/items",
    query: fc.tuple(queryText, queryText).map(([n, k]) => `namespace=${n}&key=${k}`),
  },
  { method: "PATCH", path: "/api/sessions/{id}", body: settingsBody },
];

/** One request: a route with its body or query drawn from its own arbitrary (shown as values when a run fails). */
const requestArb = fc.oneof(
  ...ROUTES.map((route) =>
    fc.record({
      method: fc.constant(route.method),
      path: fc.constant(route.path),
      body: route.body
        ? fc.oneof({ arbitrary: route.body, weight: 8 }, { arbitrary: rawBody, weight: 1 })
        : fc.constant(undefined),
      query: route.query ?? fc.constant(""),
      user,
      ids: fc.array(pathId, { minLength: 2, maxLength: 2 }),
    }),
  ),
);

/** Every answer: no 5xx; an error carries a code; a stream's error events carry one that is not internal_error. */
function check(reply: Reply, what: string) {
  expect(reply.status, `${what} → ${reply.text.slice(0, 300)}`).toBeLessThan(500);
  if (reply.status === 204 || reply.status === 202) return;
  if (reply.contentType.startsWith("text/event-stream")) {
    const errors = reply.text
      .split("\n\n")
      .filter((frame) => frame.startsWith("event: error"))
      .map((frame) => JSON.parse(frame.split("\ndata: ")[1]!));
    for (const e of errors) expect(e.error, `${what} → ${JSON.stringify(e)}`).not.toBe("internal_error");
    return;
  }
  const parsed = JSON.parse(reply.text);
  if (reply.status >= 400) expect(typeof parsed.error?.code, `${what} → ${reply.text}`).toBe("string");
  // (A store key it does not hold is answered null, as LangGraph's store does.)
  else expect(JSON.stringify(parsed?.__error__ ?? {}), what).not.toContain("internal_error");
}

describe("fuzz: runs, threads, store and settings take hostile bodies without a 5xx", () => {
  it("over 1200 generated requests, and the owner's thread still takes turns afterwards", async () => {
    const json = (r: Reply) => JSON.parse(r.text);
    const owned: string = json(await send("alice", "POST", "/threads", "{}")).thread_id;
    const theirs: string = json(await send("bob", "POST", "/threads", "{}")).thread_id;
    const first = await send(
      "alice",
      "POST",
      `/threads/${owned}/runs/wait`,
      JSON.stringify({
        assistant_id: "chat",
        input: { messages: [{ type: "human", content: "hi", id: "fixed-id" }] },
      }),
    );
    expect(first.status).toBe(200);
    const ids: Record<string, string> = {
      OWNED: owned,
      THEIRS: theirs,
      UNKNOWN: "3f1c2b7e-0d4a-4a8e-9b1f-2c3d4e5f6a7b",
    };

    const reached = new Set<string>();
    await fc.assert(
      fc.asyncProperty(requestArb, async ({ method, path: template, body: value, query, user: who, ids: [a, b] }) => {
        let i = 0;
        const path = template.replace(/\{id\}/g, () => {
          const id = [a, b][i++]!;
          return ids[id] ?? id;
        });
        let body: string | undefined;
        if (typeof value === "string") body = value;
        else if (value !== undefined)
          body = JSON.stringify(value, (_, v) => (v === "SELF" ? who : typeof v === "string" && v in ids ? ids[v] : v));
        const url = `${path}${query ? `?${query}` : ""}`;
        const reply = await send(who, method, url, body);
        check(reply, `${who} ${method} ${url} ${body?.slice(0, 200)}`);
        if (reply.status < 300) reached.add(`${method} ${template}`);
      }),
      // About 40 requests per route.
      { numRuns: 1200, seed: Number(process.env.FUZZ_SEED ?? 2727) },
    );

    // The generators reach past validation: every family of routes took some requests through.
    for (const route of [
      "POST /threads/{id}/runs/wait",
      "POST /runs/stream",
      "PUT /store/items",
      "POST /store/items/search",
      "PATCH /threads/{id}",
      "PATCH /api/sessions/{id}",
      "POST /threads/{id}/state",
      "POST /assistants",
    ])
      expect(reached, route).toContain(route);
    expect((await send("alice", "GET", "/health")).status).toBe(200);
    const after = await send(
      "alice",
      "POST",
      `/threads/${owned}/runs/wait`,
      JSON.stringify({
        assistant_id: "chat",
        input: { messages: [{ type: "human", content: "still there?" }] },
      }),
    );
    expect(after.status, after.text).toBe(200);
    expect(json(after).__error__).toBeUndefined();
    expect((await send("alice", "POST", `/threads/${owned}/history`, "{}")).status).toBe(200);
    expect((await send("alice", "GET", `/api/sessions/${owned}/messages`)).status).toBe(200);
    expect((await send("alice", "POST", "/store/items/search", "{}")).status).toBe(200);
  }, 300_000);
});
