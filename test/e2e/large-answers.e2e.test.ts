import { apiCaller } from "../support/api-call";
import { freshUser, localStackForTests } from "../support/local-stack";

// Answers larger than a response may be (Lambda's 6 MB cap; here the limits are set low). An
// export is written to the attachments bucket and answered as a download link; an erasure removes
// it with the rest of the user's folder. A session's history comes newest first in pages: before,
// one too long answered 502 for good.
const holder = localStackForTests("large-answers", {
  EXPORT_INLINE_MAX_BYTES: "2048",
  HISTORY_PAGE_MAX_BYTES: "2048",
  OFFLINE_STREAM_DELAY_MS: "0",
});

const call = apiCaller(() => holder.stack.url);

describe("an export too large to answer inline", () => {
  it("is answered as a link to the whole document, which the erasure removes", async () => {
    const user = freshUser("large");
    for (let i = 0; i < 3; i++)
      expect(
        (await call("POST", "/api/chat", user, { message: `a long note ${"about the trip ".repeat(40)}${i}` })).status,
      ).toBe(200);

    const res = await call("GET", "/api/me/export", user);
    expect(res.status).toBe(200);
    const answer = res.body as { download_url: string; bytes: number; expires_in_seconds: number };
    expect(answer).toMatchObject({ bytes: expect.any(Number), expires_in_seconds: 900 });
    expect(answer.bytes).toBeGreaterThan(2048);
    const linked = await fetch(answer.download_url);
    expect(linked.status).toBe(200);
    const text = await linked.text();
    expect(Buffer.byteLength(text)).toBe(answer.bytes);
    const doc = JSON.parse(text) as { user_id: string; sessions: unknown[] };
    expect(doc.user_id).toBe(user);
    expect(doc.sessions).toHaveLength(3);

    expect((await call("DELETE", "/api/me", user)).status).toBe(200);
    expect((await fetch(answer.download_url)).status).toBe(404);
  }, 60_000);

  it("answers a small one inline, as before", async () => {
    const user = freshUser("small");
    const res = await fetch(`${holder.stack.url}/api/me/export`, { headers: { "x-user-id": user } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-disposition")).toContain("attachment");
    expect(((await res.json()) as { user_id: string }).user_id).toBe(user);
  });
});

interface Message {
  role: string;
  content: string;
  trace?: unknown[];
}

const get = async (user: string, path: string) => {
  const res = await fetch(`${holder.stack.url}${path}`, { headers: { "x-user-id": user } });
  const text = await res.text();
  return { status: res.status, next: res.headers.get("x-pagination-next"), text };
};

describe("a session's history longer than one response", () => {
  it("comes newest first in pages that each fit, and all of it can be read", async () => {
    const user = freshUser("long-history");
    let sessionId: string | undefined;
    const sent: string[] = [];
    for (let i = 0; i < 6; i++) {
      const message = `note ${i}: ${"about the trip ".repeat(30)}`;
      const res = await fetch(`${holder.stack.url}/api/chat`, {
        method: "POST",
        headers: { "x-user-id": user, "content-type": "application/json" },
        body: JSON.stringify({ message, ...(sessionId ? { session_id: sessionId } : {}) }),
      });
      expect(res.status).toBe(200);
      sessionId = ((await res.json()) as { session_id: string }).session_id;
      sent.push(message);
    }
    for (const trace of [false, true]) {
      const pages: Message[][] = [];
      let path = `/api/sessions/${sessionId}/messages${trace ? "?trace=1" : ""}`;
      for (;;) {
        const page = await get(user, path);
        expect(page.status).toBe(200);
        expect(Buffer.byteLength(JSON.stringify(page.text))).toBeLessThanOrEqual(2048);
        pages.unshift(JSON.parse(page.text) as Message[]);
        if (!page.next) break;
        expect(pages.length).toBeLessThan(20);
        path = `/api/sessions/${sessionId}/messages?before=${page.next}${trace ? "&trace=1" : ""}`;
      }
      expect(pages.length).toBeGreaterThan(1);
      const all = pages.flat();
      expect(all.filter((m) => m.role === "user").map((m) => m.content)).toEqual(sent);
      expect(all).toHaveLength(12);
      if (trace) expect(all.filter((m) => m.role === "assistant").every((m) => Array.isArray(m.trace))).toBe(true);
    }
  }, 60_000);

  it("refuses a cursor that is not a position in it", async () => {
    const user = freshUser("history-cursor");
    const res = await fetch(`${holder.stack.url}/api/chat`, {
      method: "POST",
      headers: { "x-user-id": user, "content-type": "application/json" },
      body: JSON.stringify({ message: "hi" }),
    });
    const { session_id } = (await res.json()) as { session_id: string };
    for (const before of ["-1", "abc", "1e3", "1.5", "99999999999", ""])
      expect((await get(user, `/api/sessions/${session_id}/messages?before=${before}`)).status).toBe(400);
    const past = await get(user, `/api/sessions/${session_id}/messages?before=500`);
    expect(past.status).toBe(200);
    expect(JSON.parse(past.text)).toHaveLength(2);
    // Another user's session is 404 with any cursor, well-formed or not.
    for (const before of ["1", "abc"])
      expect((await get("someone-else", `/api/sessions/${session_id}/messages?before=${before}`)).status).toBe(404);
    const none = await get(user, `/api/sessions/${session_id}/messages?before=0`);
    expect(JSON.parse(none.text)).toEqual([]);
    expect(none.next).toBeNull();
  });
});
