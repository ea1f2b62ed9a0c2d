import { createHmac } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IntercomStandIn } from "../../../infra/local/intercom";
import { IntercomCustomer } from "../../../infra/local/intercom-customer";
import { servePlayground } from "../../../infra/local/playground-server";

// The local-only routes behind the playground: its static files, the knowledge base's admin view
// and a customer writing in to Intercom. The playground itself is tested in Chromium (test/browser).

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "playground-routes-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Handle = (req: IncomingMessage, res: ServerResponse, url: URL) => boolean | Promise<boolean>;

/** One handler on a port of its own; what it does not serve is a 599, so "not mine" is visible. */
async function serve(handle: Handle): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    void (async () => {
      if (!(await handle(req, res, new URL(req.url ?? "/", "http://localhost")))) res.writeHead(599).end();
    })();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe("the playground's static files", () => {
  it("serves the page with its CSP and hashed assets for good; nothing outside dist, nothing else", async () => {
    const dist = join(dir, "dist");
    mkdirSync(join(dist, "assets"), { recursive: true });
    writeFileSync(join(dist, "index.html"), "<!doctype html><title>p</title>");
    writeFileSync(join(dist, "assets/index-abc.js"), "console.log(1)");
    writeFileSync(join(dir, "secret.txt"), "not for the browser");
    const { url, server } = await serve((req, res, at) => servePlayground(req, res, at, { dist }));
    try {
      const page = await fetch(`${url}/`);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
      expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
      expect(page.headers.get("content-security-policy")).toContain("connect-src 'self';");
      expect(await page.text()).toContain("<title>p</title>");
      // The page learns how to reach the API from its config: locally, same origin and no sign-in.
      const config = await fetch(`${url}/config.json`);
      expect(config.headers.get("cache-control")).toBe("no-cache");
      expect(await config.json()).toEqual({ mode: "local" });
      const script = await fetch(`${url}/assets/index-abc.js`);
      expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
      expect(script.headers.get("cache-control")).toContain("immutable");
      expect((await fetch(`${url}/assets/missing.js`)).status).toBe(404);
      // An encoded climb out of dist/ is decoded, then refused.
      expect((await fetch(`${url}/assets/..%2f..%2fsecret.txt`)).status).toBe(404);
      expect((await fetch(`${url}/assets/%zz`)).status).toBe(404);
      // API paths and other methods are not the playground's.
      expect((await fetch(`${url}/api/sessions`)).status).toBe(599);
      expect((await fetch(`${url}/`, { method: "POST" })).status).toBe(599);
    } finally {
      server.close();
    }
  });

  it("says how to build it when it is not built", async () => {
    const { url, server } = await serve((req, res, at) =>
      servePlayground(req, res, at, { dist: join(dir, "nowhere") }),
    );
    try {
      const page = await fetch(`${url}/`);
      expect(page.status).toBe(503);
      expect(await page.text()).toContain("npm run playground:build");
    } finally {
      server.close();
    }
  });
});

describe("a customer writing in to Intercom", () => {
  it("creates the conversation and notifies the webhook, signed with the client secret", async () => {
    const received: Array<{ body: string; signature: string | undefined }> = [];
    const webhook = await serve(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      received.push({ body: Buffer.concat(chunks).toString(), signature: req.headers["x-hub-signature"] as string });
      res.writeHead(200).end("{}");
      return true;
    });
    const intercom = new IntercomStandIn();
    const customer = new IntercomCustomer(intercom, { clientSecret: "s3cret", webhookUrl: () => webhook.url });
    const { url, server } = await serve((req, res, at) => customer.handle(req, res, at));
    try {
      const created = await fetch(`${url}/_local/intercom/customer`, {
        method: "POST",
        body: JSON.stringify({ email: "ann@example.com", body: "Is <b>this</b> free?" }),
      });
      expect(created.status).toBe(201);
      const { conversation_id, part_id, webhook_status } = (await created.json()) as Record<string, unknown>;
      expect(webhook_status).toBe(200);
      const [notified] = received;
      expect(notified!.signature).toBe(`sha1=${createHmac("sha1", "s3cret").update(notified!.body).digest("hex")}`);
      expect(JSON.parse(notified!.body)).toMatchObject({
        topic: "conversation.user.created",
        data: { item: { id: conversation_id, source: { id: part_id, author: { type: "user" } } } },
      });
      // The customer's text is stored as Intercom stores it, HTML, so markup typed in stays text.
      const conversations = (intercom as unknown as { conversations: Map<string, { parts: Array<{ body: string }> }> })
        .conversations;
      const stored = conversations.get(String(conversation_id));
      expect(stored!.parts[0]!.body).toBe("<p>Is &lt;b&gt;this&lt;/b&gt; free?</p>");

      const status = async (init: RequestInit) => (await fetch(`${url}/_local/intercom/customer`, init)).status;
      expect(await status({ method: "GET" })).toBe(405);
      expect(await status({ method: "POST", body: "{not json" })).toBe(400);
      expect(await status({ method: "POST", body: JSON.stringify({ email: "a@b.c" }) })).toBe(400);
      expect((await fetch(`${url}/_local/intercom/actions`)).status).toBe(599);
    } finally {
      server.close();
      webhook.server.close();
    }
  });

  it("says so when the webhook cannot be reached", async () => {
    const customer = new IntercomCustomer(new IntercomStandIn(), {
      clientSecret: "s",
      webhookUrl: () => "http://127.0.0.1:9/webhooks/intercom",
    });
    const { url, server } = await serve((req, res, at) => customer.handle(req, res, at));
    try {
      const res = await fetch(`${url}/_local/intercom/customer`, {
        method: "POST",
        body: JSON.stringify({ email: "a@b.c", body: "hi" }),
      });
      expect(res.status).toBe(502);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("webhook_failed");
    } finally {
      server.close();
    }
  });
});
