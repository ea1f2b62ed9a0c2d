import { apiCaller } from "../support/api-call";
import { freshUser, localStackForTests } from "../support/local-stack";

// An export larger than a response may be (Lambda's 6 MB cap; here the inline limit is set low)
// is written to the attachments bucket and answered as a download link; an erasure removes it
// with the rest of the user's folder.
const holder = localStackForTests("large-export", { EXPORT_INLINE_MAX_BYTES: "2048", OFFLINE_STREAM_DELAY_MS: "0" });

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
