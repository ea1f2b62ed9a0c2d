import { randomUUID } from "node:crypto";
import { freshUser, sharedLocalStack } from "../support/local-stack";
import { gather, human, type Part, rememberFact, sdkClient, type Values } from "../support/sdk";

// Runs that outlive their request (issue 29), through the real SDK Client against the local stack:
// every frame has its id, a resumable run's events are kept, and a client that dropped rejoins
// with the last id it saw, with no duplicate and no gap.

const local = sharedLocalStack();

const clientFor = (user = freshUser("resumable")) => sdkClient(local.stack, user);
// The offline model repeats a fact back word by word: a reply of many chunks, streamed for seconds.
const LONG = rememberFact(8);
const lastAiText = (values: Values) => String(values.messages.filter((m) => m.type === "ai").at(-1)?.content ?? "");

describe("resumable streams", () => {
  it("a client that drops mid-run rejoins with its Last-Event-ID: the rest, with no duplicate or gap, ending in the final state", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    const controller = new AbortController();
    const seen: Part[] = [];
    for await (const part of client.runs.stream(thread.thread_id, "chat", {
      input: human(LONG),
      streamMode: ["values", "messages-tuple"],
      streamResumable: true,
      signal: controller.signal,
    }) as AsyncIterable<Part>) {
      seen.push(part);
      // Gone after a few tokens: a phone switching networks.
      if (seen.filter((p) => p.event === "messages").length === 5) {
        controller.abort();
        break;
      }
    }
    const runId = (seen[0]!.data as { run_id: string }).run_id;
    expect(seen[0]!.event).toBe("metadata");
    expect(seen.map((p) => p.id)).toEqual(seen.map((_, i) => String(i)));

    const rest = await gather(
      client.runs.joinStream(thread.thread_id, runId, { lastEventId: seen.at(-1)!.id }) as AsyncIterable<Part>,
    );
    expect(rest.length).toBeGreaterThan(0);
    const ids = [...seen, ...rest].map((p) => Number(p.id));
    expect(ids).toEqual([...ids.keys()]);
    const lastValues = rest.filter((p) => p.event === "values").at(-1)!.data as Values;
    const state = await client.threads.getState(thread.thread_id);
    expect(lastAiText(lastValues)).toContain("quarterly review");
    expect(lastAiText(lastValues)).toBe(lastAiText(state.values as Values));
    // The streamed tokens, the dropped part and the rejoined part together, make the same text.
    const tokens = [...seen, ...rest]
      .filter((p) => p.event === "messages")
      .map((p) => (p.data as [{ content: string; type: string }])[0])
      .filter((m) => m.type === "AIMessageChunk" || m.type === "ai")
      .map((m) => (typeof m.content === "string" ? m.content : ""))
      .join("");
    expect(tokens).toContain(lastAiText(state.values as Values).slice(0, 60));

    // Joined again from the start: every event, the same ones.
    const all = await gather(
      client.runs.joinStream(thread.thread_id, runId, { lastEventId: "-1" }) as AsyncIterable<Part>,
    );
    expect(all.map((p) => p.id)).toEqual(ids.map(String));
    expect(all.slice(0, seen.length)).toEqual(seen);
  });

  it("numbers every frame, resumable or not; a run that kept nothing is joined as already over", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    const parts = await gather(
      client.runs.stream(thread.thread_id, "chat", { input: human("hi"), streamMode: "values" }) as AsyncIterable<Part>,
    );
    expect(parts.map((p) => p.id)).toEqual(parts.map((_, i) => String(i)));
    const runId = (parts[0]!.data as { run_id: string }).run_id;
    expect(await gather(client.runs.joinStream(thread.thread_id, runId) as AsyncIterable<Part>)).toEqual([]);
  });

  it("answers a join of anyone else's run, an unknown run, a malformed id or Last-Event-ID with a 4xx before any event", async () => {
    const owner = freshUser("resumable-owner");
    const client = clientFor(owner);
    const thread = await client.threads.create();
    const parts = await gather(
      client.runs.stream(thread.thread_id, "chat", {
        input: human("hi"),
        streamMode: "values",
        streamResumable: true,
      }) as AsyncIterable<Part>,
    );
    const runId = (parts[0]!.data as { run_id: string }).run_id;
    const join = (path: string, headers: Record<string, string> = {}, user = owner) =>
      fetch(`${local.stack.url}${path}`, { headers: { "x-user-id": user, ...headers } });
    const base = `/threads/${thread.thread_id}/runs/${runId}/stream`;

    const foreign = await join(base, {}, freshUser("resumable-other"));
    expect(foreign.status).toBe(404);
    expect(await foreign.text()).not.toContain("event:");
    expect((await join(`/threads/${thread.thread_id}/runs/${randomUUID()}/stream`)).status).toBe(404);
    // Not a run id at all: 400, as every run route answers one (invalid_run_id).
    expect((await join(`/threads/${thread.thread_id}/runs/not-a-run/stream`)).status).toBe(400);
    for (const bad of ["abc", "1.5", "99999999999", "-2", "1; drop"]) {
      const response = await join(base, { "last-event-id": bad });
      expect(response.status, bad).toBe(400);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("invalid_last_event_id");
    }
    // The owner's own join: every kept event, numbered as streamed.
    const ok = await join(base, { "last-event-id": "0" });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toContain("text/event-stream");
    const text = await ok.text();
    expect(text.startsWith("id: 1\n")).toBe(true);
    expect(text).toContain(`id: ${parts.length - 1}\n`);
  });

  it("answers a join of a run still waiting its turn at once (its headers), then its events once it runs", async () => {
    const user = freshUser("resumable-waiting");
    const client = clientFor(user);
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "chat", { input: human("hi"), afterSeconds: 3 });
    const response = await fetch(`${local.stack.url}/threads/${thread.thread_id}/runs/${run.run_id}/stream`, {
      headers: { "x-user-id": user },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    // The response began while the run still waited for its time, not once it ran.
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe("pending");
    const text = await response.text();
    expect(text).toContain("event: metadata");
    expect(text).toContain("event: values");
  });
});
