import type { SQSEvent } from "aws-lambda";
import { createWebhookSender } from "../../functions/webhook-sender";
import { loadConfig } from "../../shared/config";
import { context, sqsRecord as record } from "../support/events";

function harness(answer: (url: string) => Response | Promise<Response>) {
  const calls: { url: string; init: RequestInit }[] = [];
  const published: { body: unknown; delaySeconds?: number }[] = [];
  const send = (async (url: string, init: RequestInit) => {
    calls.push({ url, init });
    return answer(url);
  }) as typeof fetch;
  const sender = createWebhookSender(
    async () => ({
      config: loadConfig({ WEBHOOK_HOSTS: "hooks.example.com" }),
      webhooksQueue: { publish: async (body, options) => void published.push({ body, ...options }) },
    }),
    send,
  );
  const run = (...records: ReturnType<typeof record>[]) => sender({ Records: records } as SQSEvent, context());
  return { calls, published, run };
}

const message = (attempt = 1, url = "https://hooks.example.com/done") => ({
  url,
  attempt,
  payload: { run_id: "r1", status: "success", values: { messages: [] } },
});

describe("the webhook sender", () => {
  it("posts the finished run with webhook_sent_at, never following a redirect", async () => {
    const { calls, published, run } = harness(() => new Response("ok"));
    expect((await run(record("m", message()))).batchItemFailures).toEqual([]);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.init).toMatchObject({ method: "POST", redirect: "manual" });
    const body = JSON.parse(String(calls[0]!.init.body));
    expect(body).toMatchObject({ run_id: "r1", status: "success", values: { messages: [] } });
    expect(Date.parse(body.webhook_sent_at)).not.toBeNaN();
    expect(published).toEqual([]);
  });

  it("sends a failed delivery again later, with backoff, as a new message; the last attempt's failure dead-letters", async () => {
    for (const failing of [
      () => new Response("no", { status: 500 }),
      () => new Response(null, { status: 302, headers: { location: "https://evil.example.net/" } }),
      () => Promise.reject(new TypeError("fetch failed")),
    ]) {
      const { published, run } = harness(failing);
      expect((await run(record("m", message(2)))).batchItemFailures).toEqual([]);
      expect(published).toEqual([{ body: message(3), delaySeconds: 20 }]);
    }
    const last = harness(() => new Response("no", { status: 503 }));
    expect((await last.run(record("m", message(5)))).batchItemFailures).toEqual([{ itemIdentifier: "m" }]);
    expect(last.published).toEqual([]);
  });

  // A probe's finding: the last attempt's failure was redelivered by the queue (its receive count)
  // and POSTed again each time: 7 POSTs where the docs say 5.
  it("posts the last attempt once: its redeliveries go on to the dead-letter queue without another POST", async () => {
    const last = harness(() => new Response("no", { status: 503 }));
    for (const receives of [2, 3])
      expect((await last.run(record("m", message(5), receives))).batchItemFailures).toEqual([{ itemIdentifier: "m" }]);
    expect(last.calls).toHaveLength(0);
    expect(last.published).toEqual([]);
  });

  it("calls nothing for a host the deployment no longer allows, or a malformed message (which dead-letters)", async () => {
    const { calls, published, run } = harness(() => new Response("ok"));
    const response = await run(
      record("gone", message(1, "https://evil.example.net/x")),
      record("bad-json", "{"),
      record("bad-attempt", { ...message(), attempt: 99 }),
      record("no-url", { attempt: 1, payload: {} }),
    );
    expect(calls).toEqual([]);
    expect(published).toEqual([]);
    expect(response.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual([
      "bad-attempt",
      "bad-json",
      "no-url",
    ]);
  });
});
