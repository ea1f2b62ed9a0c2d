import { SessionOwners } from "../../shared/stores/session-owners";
import { localStackForTests } from "../support/local-stack";

// What a hostile probe of the Agent Server's threads, assistants and store found (2026-11-27):
// inputs that were answered 500, refused writes that wrote anyway, and filters that were ignored.
// Each is answered with a precise 4xx now, and writes nothing.
// A short wait for a busy thread's lease, so a refusal for one shows in a second, not twenty.
const local = localStackForTests("agent-server-hostile", { SESSION_QUEUE_WAIT_MS: "500" });

const call = async (user: string, method: string, path: string, body?: unknown | string) => {
  const res = await fetch(`${local.stack.url}${path}`, {
    method,
    headers: { "x-user-id": user, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
};
const count = async (user: string) => (await call(user, "POST", "/threads/count", {})).json as number;
/** A new thread of `user`'s with one turn in it. */
const withTurn = async (user: string) => {
  const t = (await call(user, "POST", "/threads", {})).json.thread_id as string;
  const run = await call(user, "POST", `/threads/${t}/runs/wait`, {
    assistant_id: "chat",
    input: { messages: [{ role: "user", content: "hello there" }] },
  });
  expect(run.status).toBe(200);
  return t;
};

describe("keys JavaScript and the stores' marshalling cannot keep", () => {
  it.each([
    ["thread metadata", "/threads", '{"metadata":{"constructor":1}}'],
    ["nested", "/threads", '{"metadata":{"a":{"__proto__":{"x":1}}}}'],
    ["top level of metadata", "/threads", '{"metadata":{"__proto__":{"x":1}}}'],
    ["assistant config", "/assistants", '{"graph_id":"chat","config":{"configurable":{"constructor":"x"}}}'],
    ["a store value", "/store/items", '{"namespace":["notes"],"key":"k","value":{"__proto__":{"x":1}}}'],
  ])("are refused with 400 in %s, and nothing is written", async (_, path, body) => {
    const user = `keys-${path.length}-${body.length}`;
    const before = await count(user);
    const res = await call(user, path === "/store/items" ? "PUT" : "POST", path, body);
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.json)).toMatch(/constructor|__proto__/);
    expect(await count(user)).toBe(before);
  });

  it("a run's metadata with one is refused before the thread is marked busy", async () => {
    const t = (await call("keys-run", "POST", "/threads", {})).json.thread_id as string;
    const run = await call(
      "keys-run",
      "POST",
      `/threads/${t}/runs/wait`,
      '{"assistant_id":"chat","input":{"messages":[{"role":"user","content":"hi"}]},"metadata":{"constructor":1}}',
    );
    expect(run.status).toBe(400);
    expect((await call("keys-run", "GET", `/threads/${t}`)).json.status).toBe("idle");
  });
});

describe("a constructor key where it is kept as JSON", () => {
  it("is a store value's like any other key, read back as written", async () => {
    const user = "f1";
    const value = { driver: "Hamilton", constructor: "Mercedes" };
    const put = await call(user, "PUT", "/store/items", { namespace: ["f1"], key: "k", value });
    expect(put.status).toBe(204);
    const got = await call(user, "GET", "/store/items?namespace=f1&key=k");
    expect(got.json.value).toEqual(value);
  });

  it("is a message's, in a state write, and the thread still reads", async () => {
    const user = "kwargs";
    const t = (await call(user, "POST", "/threads", {})).json.thread_id as string;
    const write = await call(user, "POST", `/threads/${t}/state`, {
      values: { messages: [{ type: "human", content: "x", additional_kwargs: { constructor: { name: "Set" } } }] },
      as_node: "agent",
    });
    expect(write.status).toBe(200);
    const thread = await call(user, "GET", `/threads/${t}`);
    expect(thread.status).toBe(200);
    expect(thread.json.values.messages[0].additional_kwargs).toEqual({ constructor: { name: "Set" } });
  });
});

describe("bounds the stores' queries depend on", () => {
  it("metadata nested thousands of levels deep is a 400, not a stack overflow", async () => {
    const deep = `${'{"a":'.repeat(5000)}1${"}".repeat(5000)}`;
    const res = await call("deep", "POST", "/threads", `{"metadata":${deep}}`);
    expect(res.status).toBe(400);
    const value = await call("deep", "PUT", "/store/items", `{"namespace":["n"],"key":"k","value":${deep}}`);
    expect(value.status).toBe(400);
  });

  it.each([[{ prefix: ["notes"], offset: 2147483648 }], [{ max_depth: 2147483648 }], [{ offset: 1e15 }]])(
    "namespace listing with %j is a 400",
    async (body) => {
      expect((await call("ns", "POST", "/store/namespaces", body)).status).toBe(400);
    },
  );
});

describe("state writes", () => {
  it("removing a message the state does not hold is a 400, and the state is unchanged", async () => {
    const t = await withTurn("rm");
    const before = (await call("rm", "GET", `/threads/${t}/state`)).json;
    const res = await call("rm", "POST", `/threads/${t}/state`, {
      values: { messages: [{ type: "remove", id: "nope" }] },
    });
    expect(res.status).toBe(400);
    expect((await call("rm", "GET", `/threads/${t}/state`)).json.checkpoint).toEqual(before.checkpoint);
  });

  it.each([
    ["removing an unknown message", { messages: [{ type: "remove", id: "nope" }] }, "agent"],
    ["naming an unknown node", { messages: [{ type: "human", content: "x" }] }, "nonexistent"],
  ])("a new thread's supersteps %s are a 400, and no thread is made", async (what, values, asNode) => {
    const user = `steps-${what.length}`;
    const before = await count(user);
    const res = await call(user, "POST", "/threads", { supersteps: [{ updates: [{ values, as_node: asNode }] }] });
    expect(res.status).toBe(400);
    expect(await count(user)).toBe(before);
  });

  it("a write at a checkpoint the thread does not have is a 404, and the state is unchanged", async () => {
    const t = await withTurn("cp");
    const before = (await call("cp", "GET", `/threads/${t}/state`)).json;
    const res = await call("cp", "POST", `/threads/${t}/state`, {
      values: { messages: [{ type: "human", content: "x" }] },
      checkpoint_id: "1f000000-0000-6000-8000-000000000000",
    });
    expect(res.status).toBe(404);
    expect(res.json.error?.code ?? res.json.detail).toMatch(/checkpoint/);
    const after = (await call("cp", "GET", `/threads/${t}/state`)).json;
    expect(after.checkpoint).toEqual(before.checkpoint);
    expect(after.values.messages).toHaveLength(before.values.messages.length);
    expect((await call("cp", "GET", `/threads/${t}`)).json.status).toBe("idle");
  });
});

describe("searches", () => {
  it("thread search filters by values, as count does", async () => {
    const user = "values";
    await call(user, "POST", "/threads", {});
    const search = await call(user, "POST", "/threads/search", { values: { summary: "zzz" } });
    expect(search.status).toBe(200);
    expect(search.json).toEqual([]);
    expect((await call(user, "POST", "/threads/count", { values: { summary: "zzz" } })).json).toBe(0);
  });

  it("metadata filters match in any key order, and a part of a nested object, as jsonb containment does", async () => {
    const user = "contains";
    const t = (await call(user, "POST", "/threads", { metadata: { o: { a: 1, b: 2 }, tags: ["x", "y"] } })).json;
    for (const metadata of [{ o: { b: 2, a: 1 } }, { o: { a: 1 } }, { tags: ["y"] }]) {
      const found = (await call(user, "POST", "/threads/search", { metadata })).json;
      expect(found.map((f: { thread_id: string }) => f.thread_id)).toEqual([t.thread_id]);
    }
    expect((await call(user, "POST", "/threads/search", { metadata: { o: { a: 2 } } })).json).toEqual([]);
  });
});

describe("assistants", () => {
  it.each(["constructor", "__proto__", "toString", "hasOwnProperty"])(
    "a graph_id of %s is a 400 on create and on patch",
    async (graph) => {
      expect((await call("graphs", "POST", "/assistants", { graph_id: graph })).status).toBe(400);
      const a = (await call("graphs", "POST", "/assistants", { graph_id: "chat" })).json.assistant_id as string;
      expect((await call("graphs", "PATCH", `/assistants/${a}`, { graph_id: graph })).status).toBe(400);
    },
  );

  it("a delete with its threads that cannot delete one (a run holds it) keeps the assistant, so a retry finishes it", async () => {
    const user = "del-threads";
    const a = (await call(user, "POST", "/assistants", { graph_id: "chat" })).json.assistant_id as string;
    const threads: string[] = [];
    for (let i = 0; i < 2; i++) {
      const t = (await call(user, "POST", "/threads", {})).json.thread_id as string;
      const run = await call(user, "POST", `/threads/${t}/runs/wait`, {
        assistant_id: a,
        input: { messages: [{ role: "user", content: "hi" }] },
      });
      expect(run.status).toBe(200);
      threads.push(t);
    }
    // A run that outlives the delete's wait for the thread (SESSION_QUEUE_WAIT_MS), held as a run holds it.
    const held = await new SessionOwners(local.stack.dynamo.client, "agent-checkpoints").lease(threads[1]!, user);
    expect(held.lease).toBeDefined();
    try {
      const res = await call(user, "DELETE", `/assistants/${a}?delete_threads=true`);
      expect(res.status).toBe(409);
      expect((await call(user, "GET", `/assistants/${a}`)).status).toBe(200);
      expect((await call(user, "GET", `/threads/${threads[1]}`)).status).toBe(200);
    } finally {
      await held.lease!.release();
    }
    expect((await call(user, "DELETE", `/assistants/${a}?delete_threads=true`)).status).toBe(204);
    expect((await call(user, "GET", `/assistants/${a}`)).status).toBe(404);
    for (const t of threads) expect((await call(user, "GET", `/threads/${t}`)).status).toBe(404);
  });

  it("a delete of another user's assistant deletes none of that user's threads", async () => {
    const a = (await call("del-owner", "POST", "/assistants", { graph_id: "chat" })).json.assistant_id as string;
    const t = (await call("del-owner", "POST", "/threads", {})).json.thread_id as string;
    await call("del-owner", "POST", `/threads/${t}/runs/wait`, {
      assistant_id: a,
      input: { messages: [{ role: "user", content: "hi" }] },
    });
    expect((await call("del-other", "DELETE", `/assistants/${a}?delete_threads=true`)).status).toBe(404);
    expect((await call("del-owner", "GET", `/threads/${t}`)).status).toBe(200);
    expect((await call("del-owner", "GET", `/assistants/${a}`)).status).toBe(200);
  });
});

describe("races", () => {
  it("twenty metadata patches of one thread at once all land", async () => {
    const user = "patches";
    const t = (await call(user, "POST", "/threads", {})).json.thread_id as string;
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call(user, "PATCH", `/threads/${t}`, { metadata: { [`k${i}`]: i } })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    const metadata = (await call(user, "GET", `/threads/${t}`)).json.metadata;
    expect(Object.keys(metadata).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `k${i}`).sort());
  });

  it("a hundred patches of one thread at once: each answered 200 or 409 (to retry), never 5xx, each 200 kept", async () => {
    const user = "patches-100";
    const t = (await call(user, "POST", "/threads", {})).json.thread_id as string;
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => call(user, "PATCH", `/threads/${t}`, { metadata: { [`k${i}`]: i } })),
    );
    expect(answers.filter((a) => a.status !== 200 && a.status !== 409)).toEqual([]);
    const kept = answers.flatMap((a, i) => (a.status === 200 ? [`k${i}`] : []));
    const metadata = (await call(user, "GET", `/threads/${t}`)).json.metadata;
    expect(Object.keys(metadata)).toEqual(expect.arrayContaining(kept));
  });

  it("twenty patches of one assistant at once: each answered 200 is kept, the versions in step", async () => {
    const user = "assistant-patches";
    const a = (await call(user, "POST", "/assistants", { graph_id: "chat" })).json.assistant_id as string;
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call(user, "PATCH", `/assistants/${a}`, { metadata: { [`k${i}`]: i } })),
    );
    const kept = answers.flatMap((r, i) => (r.status === 200 ? [`k${i}`] : []));
    expect(answers.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    const current = (await call(user, "GET", `/assistants/${a}`)).json;
    expect(Object.keys(current.metadata)).toEqual(expect.arrayContaining(kept));
    const versions = (await call(user, "POST", `/assistants/${a}/versions`, { limit: 100 })).json;
    expect(versions[0].version).toBe(current.version);
  });

  it("a thread patched while it is deleted is gone afterwards, from search and count too", async () => {
    const user = "patch-delete";
    for (let round = 0; round < 60; round++) {
      const t = (await call(user, "POST", "/threads", {})).json.thread_id as string;
      const [patched, deleted] = await Promise.all([
        call(user, "PATCH", `/threads/${t}`, { metadata: { round } }),
        call(user, "DELETE", `/threads/${t}`),
      ]);
      expect([200, 404]).toContain(patched.status);
      expect([204, 409]).toContain(deleted.status);
      if (deleted.status !== 204) continue;
      expect((await call(user, "GET", `/threads/${t}`)).status).toBe(404);
      const ids = (await call(user, "POST", "/threads/search", { limit: 1000 })).json.map(
        (x: { thread_id: string }) => x.thread_id,
      );
      expect(ids).not.toContain(t);
    }
    expect(await count(user)).toBe(0);
  });

  it("an assistant patched while it is deleted stays deleted", async () => {
    const user = "assistant-delete";
    for (let round = 0; round < 20; round++) {
      const a = (await call(user, "POST", "/assistants", { graph_id: "chat" })).json.assistant_id as string;
      const [, deleted] = await Promise.all([
        call(user, "PATCH", `/assistants/${a}`, { metadata: { round } }),
        call(user, "DELETE", `/assistants/${a}`),
      ]);
      if (deleted.status === 204) expect((await call(user, "GET", `/assistants/${a}`)).status).toBe(404);
    }
  });
});

describe("the memories namespace", () => {
  const put = (user: string, namespace: string[], value: unknown) =>
    call(user, "PUT", "/store/items", { namespace, key: "k", value });

  it("refuses a namespace deeper than memories/<user>/<project>, and a value with fields a memory lacks", async () => {
    const user = "mem-deep";
    const deep = await put(user, ["memories", user, "p", "deeper"], { content: "likes tea" });
    expect(deep.status).toBe(400);
    const extra = await put(user, ["memories", user, "p"], { content: "likes tea", mood: "happy" });
    expect(extra.status).toBe(400);
    expect(JSON.stringify(extra.json)).toMatch(/mood/);
    // Nothing was written by either.
    const listed = await call(user, "POST", "/store/namespaces", {});
    expect(listed.json.namespaces).toEqual([]);
  });

  it("lists its namespaces by suffix, as any other", async () => {
    const user = "mem-suffix";
    expect((await put(user, ["memories", user, "proj1"], { content: "likes tea" })).status).toBe(204);
    const bySuffix = await call(user, "POST", "/store/namespaces", { suffix: ["proj1"] });
    expect(bySuffix.json.namespaces).toEqual([["memories", user, "proj1"]]);
    const both = await call(user, "POST", "/store/namespaces", { prefix: ["memories"], suffix: ["proj1"] });
    expect(both.json.namespaces).toEqual([["memories", user, "proj1"]]);
    expect((await call(user, "POST", "/store/namespaces", { suffix: ["other"] })).json.namespaces).toEqual([]);
  });

  it("a filter with an operator LangGraph's store knows but this one does not is a 400, not an empty answer", async () => {
    const res = await call("ops", "POST", "/store/items/search", {
      namespace_prefix: ["notes"],
      filter: { n: { $gt: 2 } },
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.json)).toMatch(/\$gt/);
  });
});

describe("memories searched by meaning", () => {
  it("filter before they are cut to the limit: the best match that passes the filter is found", async () => {
    const user = "mem-filter";
    const put = (key: string, value: unknown) =>
      call(user, "PUT", "/store/items", { namespace: ["memories", user], key, value });
    for (let i = 0; i < 5; i++) expect((await put(`apple${i}`, { content: `apple apple ${i}` })).status).toBe(204);
    expect(
      (
        await put("work", {
          content: "quarterly budget review meeting with the regional sales team, one apple",
          category: "work",
        })
      ).status,
    ).toBe(204);
    const found = await call(user, "POST", "/store/items/search", {
      namespace_prefix: ["memories", user],
      query: "apple",
      filter: { category: "work" },
      limit: 1,
    });
    expect(found.status).toBe(200);
    expect(found.json.items.map((i: { key: string }) => i.key)).toEqual(["work"]);
  });
});

describe("from the second probe", () => {
  const mem = (user: string, key: string, value: unknown) =>
    call(user, "PUT", "/store/items", { namespace: ["memories", user], key, value });

  it("a memories filter compares values for equality with a query as without one", async () => {
    const user = "mem-eq";
    expect((await mem(user, "a", { content: "billing at acme", tags: ["job", "acme"] })).status).toBe(204);
    expect((await mem(user, "c", { content: "billing style guide", tags: ["style", "job"] })).status).toBe(204);
    const search = (extra: object) =>
      call(user, "POST", "/store/items/search", { namespace_prefix: ["memories", user], ...extra });
    const keys = (r: { json: { items: { key: string }[] } }) => r.json.items.map((i) => i.key).sort();
    expect(keys(await search({ filter: { tags: ["job"] } }))).toEqual([]);
    expect(keys(await search({ filter: { tags: ["job"] }, query: "billing" }))).toEqual([]);
    expect(keys(await search({ filter: { tags: ["job", "acme"] }, query: "billing" }))).toEqual(["a"]);
  });

  it("a memory's unknown field is named in the error", async () => {
    const res = await mem("mem-extra", "k", { content: "x", extra: 1 });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe("invalid_value");
    expect(res.json.error.message).toMatch(/extra/);
  });

  it("an operator anywhere in a filter's value is a 400", async () => {
    const res = await call("ops2", "POST", "/store/items/search", {
      namespace_prefix: ["notes"],
      filter: { tags: [{ $in: 1 }] },
    });
    expect(res.status).toBe(400);
  });

  it("thread search takes a null metadata filter as count does", async () => {
    expect((await call("null-filter", "POST", "/threads/search", { metadata: null })).status).toBe(200);
    expect((await call("null-filter", "POST", "/threads/count", { metadata: null })).status).toBe(200);
  });
});

describe("a memory key put back to an earlier value", () => {
  it("holds that value alone, and a delete removes it", async () => {
    const user = "mem-back";
    const put = (content: string) =>
      call(user, "PUT", "/store/items", { namespace: ["memories", user], key: "k", value: { content } });
    const get = async () => (await call(user, "GET", `/store/items?namespace=memories.${user}&key=k`)).json;
    for (const colour of ["blue", "green", "blue"])
      expect((await put(`favourite colour is ${colour}`)).status).toBe(204);
    expect((await get()).value.content).toBe("favourite colour is blue");
    const listed = await call(user, "POST", "/store/items/search", { namespace_prefix: ["memories", user] });
    expect(listed.json.items.map((i: { value: { content: string } }) => i.value.content)).toEqual([
      "favourite colour is blue",
    ]);
    expect((await call(user, "DELETE", "/store/items", { namespace: ["memories", user], key: "k" })).status).toBe(204);
    expect(await get()).toBeNull();
  });
});

describe("memories searched by meaning, by namespace", () => {
  it("a project's prefix finds that project's memories only; the user's prefix finds every project's, each under its own", async () => {
    const user = "mem-ns";
    const put = (ns: string[], key: string, content: string) =>
      call(user, "PUT", "/store/items", { namespace: ns, key, value: { content } });
    expect((await put(["memories", user], "home", "tea at home")).status).toBe(204);
    expect((await put(["memories", user, "p1"], "work", "tea at work")).status).toBe(204);
    const search = async (prefix: string[]) =>
      (await call(user, "POST", "/store/items/search", { namespace_prefix: prefix, query: "tea" })).json.items
        .map((i: { key: string; namespace: string[] }) => `${i.namespace.join("/")}:${i.key}`)
        .sort();
    expect(await search(["memories", user, "p1"])).toEqual([`memories/${user}/p1:work`]);
    expect(await search(["memories", user])).toEqual([`memories/${user}/p1:work`, `memories/${user}:home`]);
    expect(await search(["memories"])).toEqual([`memories/${user}/p1:work`, `memories/${user}:home`]);
  });
});

describe("a run's command.update", () => {
  // LangGraph stores a command's writes with the checkpoint before it applies them: one its reducer
  // then refused failed that run and every later read of the thread (state, history, runs: 500).

  it.each([
    ["removing an unknown message", { messages: [{ type: "remove", id: "nope" }] }, "invalid_update"],
    ["removing one as a [key, value] pair", [["messages", [{ type: "remove", id: "nope" }]]], "invalid_update"],
    ["a pair whose message has no type", [["messages", [{ type: "bogus", content: "x" }]]], "invalid_command_update"],
    ["a pair whose messages are a number", [["messages", 42]], "invalid_command_update"],
    ["a pair whose messages are null", [["messages", null]], "invalid_command_update"],
    ["a pair whose tokenRatio is text", [["tokenRatio", "abc"]], "invalid_command_update"],
    ["a pair whose summary is an object", [["summary", { a: 1 }]], "invalid_command_update"],
  ])("%s is a 400, and the thread reads and runs as before", async (what, update, code) => {
    const user = `cmd-${what.length}`;
    const t = await withTurn(user);
    const before = (await call(user, "GET", `/threads/${t}/state`)).json;
    const res = await call(user, "POST", `/threads/${t}/runs/wait`, { assistant_id: "chat", command: { update } });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe(code);
    const after = await call(user, "GET", `/threads/${t}/state`);
    expect(after.status).toBe(200);
    expect(after.json.checkpoint).toEqual(before.checkpoint);
    expect((await call(user, "GET", `/threads/${t}`)).json.status).toBe("idle");
    const next = await call(user, "POST", `/threads/${t}/runs/wait`, {
      assistant_id: "chat",
      input: { messages: [{ role: "user", content: "again" }] },
    });
    expect(next.status).toBe(200);
    expect(next.json.__error__).toBeUndefined();
  });

  it.each([{}, { update: {} }, { update: [] }])("an empty command %j is a 400, not a server error", async (command) => {
    const t = await withTurn("cmd-empty");
    const res = await call("cmd-empty", "POST", `/threads/${t}/runs/wait`, { assistant_id: "chat", command });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe("invalid_command");
  });

  it("a stateless run removing a message is a 400, and leaves no thread", async () => {
    const before = await count("cmd-stateless");
    const res = await call("cmd-stateless", "POST", "/runs/wait", {
      assistant_id: "chat",
      command: { update: { messages: [{ type: "remove", id: "nope" }] } },
      on_completion: "keep",
    });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe("invalid_update");
    expect(await count("cmd-stateless")).toBe(before);
  });

  it("a background run removing an unknown message ends in error, and the thread reads and runs as before", async () => {
    const t = await withTurn("cmd-bg");
    const run = await call("cmd-bg", "POST", `/threads/${t}/runs`, {
      assistant_id: "chat",
      command: { update: { messages: [{ type: "remove", id: "nope" }] } },
    });
    expect(run.status).toBe(200);
    await call("cmd-bg", "GET", `/threads/${t}/runs/${run.json.run_id}/join`);
    const ended = (await call("cmd-bg", "GET", `/threads/${t}/runs/${run.json.run_id}`)).json;
    expect(ended).toMatchObject({ status: "error", error: { code: "invalid_update" } });
    expect((await call("cmd-bg", "GET", `/threads/${t}/state`)).status).toBe(200);
    // As LangGraph shows a thread whose last run failed; the next run clears it.
    expect((await call("cmd-bg", "GET", `/threads/${t}`)).json.status).toBe("error");
    const next = await call("cmd-bg", "POST", `/threads/${t}/runs/wait`, {
      assistant_id: "chat",
      input: { messages: [{ role: "user", content: "again" }] },
    });
    expect(next.json.__error__).toBeUndefined();
    expect((await call("cmd-bg", "GET", `/threads/${t}`)).json.status).toBe("idle");
  });

  it("removing a message the thread holds still runs", async () => {
    const t = await withTurn("cmd-ok");
    const messages = (await call("cmd-ok", "GET", `/threads/${t}/state`)).json.values.messages as { id: string }[];
    const res = await call("cmd-ok", "POST", `/threads/${t}/runs/wait`, {
      assistant_id: "chat",
      command: { update: { messages: [{ type: "remove", id: messages[1]!.id }] } },
    });
    expect(res.status).toBe(200);
    expect(res.json.__error__).toBeUndefined();
    const ids = ((await call("cmd-ok", "GET", `/threads/${t}/state`)).json.values.messages as { id: string }[]).map(
      (m) => m.id,
    );
    expect(ids).not.toContain(messages[1]!.id);
  });
});
