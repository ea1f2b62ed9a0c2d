import { describe, expect, it } from "vitest";
import {
  apiCall,
  baseUrl,
  conversation,
  expectAccessible,
  browserForFile,
  openPlayground,
  say,
  screenshot,
} from "./browser";

const chromium = browserForFile();

describe("chat", () => {
  it("streams an answer in parts, with its tool calls inline and collapsible", async () => {
    const { page, problems } = await openPlayground(chromium.browser, "chat-streaming");
    const box = page.getByRole("textbox", { name: "Message" });
    await box.fill("How much does the Pro plan cost?");
    await box.press("Enter");

    // Streamed: the reply is on screen, unfinished, while the run is still going.
    const reply = page.getByTestId("message-ai").locator(".text").last();
    await expect
      .poll(async () => (await reply.count()) > 0 && (await reply.innerText()).length > 0, { timeout: 30_000 })
      .toBe(true);
    const partial = await reply.innerText();
    expect(await conversation(page).getAttribute("aria-busy")).toBe("true");
    await expect.poll(() => conversation(page).getAttribute("aria-busy"), { timeout: 30_000 }).toBe("false");
    const final = await reply.innerText();
    expect(final.length).toBeGreaterThan(partial.length);
    expect(final).toContain("The Pro plan costs 8 euros per user per month");

    // The knowledge search is shown inline, collapsed to a summary; opened by keyboard, its arguments.
    const search = page.getByTestId("tool-call").filter({ hasText: "search_knowledge_base" });
    await expect.poll(() => search.locator("summary").innerText()).toMatch(/search_knowledge_base\s+\d+ result\(s\)/);
    expect(await search.getAttribute("open")).toBeNull();
    await search.locator("summary").focus();
    await page.keyboard.press("Enter");
    expect(await search.getAttribute("open")).not.toBeNull();
    expect(await search.locator("pre").first().innerText()).toContain('"query": "How much does the Pro plan cost?"');
    expect(await search.locator("pre").nth(1).innerText()).toContain("pricing.md");

    await expectAccessible(page, "chat at 1440 px");
    await screenshot(page, "chat-1440");

    // A phone: the same conversation (the tool call folded again, by keyboard), nothing wider than the screen, the sessions behind a button.
    await page.keyboard.press("Enter");
    expect(await search.getAttribute("open")).toBeNull();
    await page.setViewportSize({ width: 375, height: 812 });
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(375);
    // Every panel's tab is on screen, none hidden behind a sideways scroll.
    for (const tab of await page.getByRole("tab").all()) {
      const box = (await tab.boundingBox())!;
      expect(box.x + box.width, await tab.innerText()).toBeLessThanOrEqual(375);
    }
    expect(await page.getByRole("heading", { name: "Sessions" }).isVisible()).toBe(false);
    await expectAccessible(page, "chat at 375 px");
    await screenshot(page, "chat-375");
    await page.getByRole("button", { name: "Sessions" }).click();
    expect(await page.getByRole("heading", { name: "Sessions" }).isVisible()).toBe(true);
    expect(problems).toEqual([]);
  });

  it("keeps the session over a reload, named in the sidebar, and renames it by keyboard", async () => {
    const { page, problems } = await openPlayground(chromium.browser, "chat-reload");
    await say(page, "Remember that my team is called Falcon");
    const current = page.locator('.sessions [aria-current="page"]');
    await current.waitFor({ timeout: 15_000 });
    // Named once the turn has ended (alongside its reply): the row says "New chat" until then.
    await expect.poll(() => current.innerText(), { timeout: 10_000 }).not.toMatch(/^New chat/);
    const name = (await current.innerText()).split("\n")[0]!;
    expect(name.length).toBeGreaterThan(0);
    const thread = new URL(page.url()).searchParams.get("thread");
    expect(thread).toMatch(/^[0-9a-f-]{36}$/);

    await page.reload();
    await page.getByTestId("message-human").filter({ hasText: "Remember that my team is called Falcon" }).waitFor();
    expect(await page.getByTestId("message-ai").last().innerText()).toContain("Falcon");
    await current.waitFor();
    expect((await current.innerText()).split("\n")[0]).toBe(name);
    expect(new URL(page.url()).searchParams.get("thread")).toBe(thread);

    // Rename: the button, the field it opens (focused), Enter.
    await page.getByRole("button", { name: `Rename ${name}` }).focus();
    await page.keyboard.press("Enter");
    await page.keyboard.press("ControlOrMeta+a");
    await page.keyboard.type("Team Falcon notes");
    // The reload waits for the rename's PATCH: on a busy machine a reload could otherwise cut it off.
    const renamed = page.waitForResponse((r) => r.request().method() === "PATCH" && r.url().includes("/threads/"));
    await page.keyboard.press("Enter");
    expect((await renamed).status()).toBe(200);
    await page.reload();
    await expect.poll(() => current.innerText(), { timeout: 10_000 }).toContain("Team Falcon notes");

    // Settings: opened from the row, each checkbox saved at once (PATCH /api/sessions/{id}).
    await page.getByRole("button", { name: "Settings of Team Falcon notes" }).click();
    await page.getByRole("checkbox", { name: "Memory tools" }).uncheck();
    await page.getByRole("checkbox", { name: /Private/ }).check();
    // The form shows a setting as soon as it is clicked; its PATCH may still be on the way.
    const saved = async () =>
      (await apiCall<{ sessions: { settings: Record<string, boolean> }[] }>("chat-reload", "/api/sessions")).body
        .sessions[0]!.settings;
    await expect.poll(saved).toMatchObject({ memory: false, private: true, knowledge: true });
    // Opened again after a reload, the form reads what was saved (GET /api/sessions/{id}).
    await page.reload();
    await page.getByRole("button", { name: "Settings of Team Falcon notes" }).click();
    const memory = page.getByRole("checkbox", { name: "Memory tools" });
    await memory.waitFor();
    expect(await memory.isChecked()).toBe(false);
    expect(await page.getByRole("checkbox", { name: /Private/ }).isChecked()).toBe(true);
    expect(await page.getByRole("checkbox", { name: "Knowledge search" }).isChecked()).toBe(true);

    // Another user sees none of it: sessions are each user's own.
    const other = await apiCall<{ sessions: unknown[] }>("chat-reload-other", "/api/sessions");
    expect(other.body.sessions).toEqual([]);
    await expectAccessible(page, "sessions");
    await screenshot(page, "sessions-1440");
    expect(problems).toEqual([]);
  });

  it("attaches a CSV with its columns and answers a SQL question about it; an image gets a preview", async () => {
    const { page, problems } = await openPlayground(chromium.browser, "chat-csv");
    await page.getByLabel(/Attach a data file/).setInputFiles([
      {
        name: "sales.csv",
        mimeType: "text/csv",
        buffer: Buffer.from("region,amount\nnorth,10\nsouth,5\nnorth,7\n"),
      },
      {
        name: "pixel.png",
        mimeType: "image/png",
        buffer: Buffer.from(
          "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
          "base64",
        ),
      },
    ]);
    const csv = page.getByTestId("attachment").filter({ hasText: "sales.csv" });
    await csv.filter({ hasText: "ready" }).waitFor({ timeout: 15_000 });
    expect(await csv.innerText()).toMatch(
      /table sales, 3 rows: region VARCHAR, amount BIGINT|table sales, 3 rows: region/,
    );
    await page.getByRole("img", { name: "Preview of pixel.png" }).waitFor();

    await say(page, "run `SELECT region, SUM(amount) AS total FROM sales GROUP BY region ORDER BY region`");
    const query = page.getByTestId("tool-call").filter({ hasText: "query_data" });
    await query.waitFor();
    const answer = await page.getByTestId("message-ai").last().innerText();
    expect(answer).toMatch(/north \| 17/);
    expect(answer).toMatch(/south \| 5/);
    await expectAccessible(page, "chat with attachments");
    await screenshot(page, "chat-csv-1440");
    expect(problems).toEqual([]);
  });

  it("shows the busy thread's refusal with its code when another client holds the session, and queues the message on request", async () => {
    const user = "chat-busy";
    const { page, problems } = await openPlayground(chromium.browser, user);
    await say(page, "hi there");
    const thread = new URL(page.url()).searchParams.get("thread")!;

    // Another client starts a long answer on the same thread: once its stream has said `metadata`,
    // the run holds the session's lease ...
    // Its answer repeats a long fact back word by word, so it holds the lease for seconds, not a
    // moment a busy machine could miss.
    const fact = "the quarterly review covers pricing, plans, seats and the renewal calendar; ".repeat(20);
    const elsewhere = await startRun(user, thread, `Remember that ${fact}`);
    // ... so this message is refused with the API's code, and offered a queue.
    const box = page.getByRole("textbox", { name: "Message" });
    await box.fill("What about the Business plan?");
    await box.press("Enter");
    const alert = page.getByRole("alert");
    await alert.waitFor({ timeout: 15_000 });
    expect(await alert.innerText()).toMatch(/session_busy|thread_busy/);
    await expectAccessible(page, "chat with a busy thread");
    await screenshot(page, "chat-busy-1440");
    // Some browsers log the refused request itself as a console error: that one is expected here.
    problems.splice(0, problems.length, ...problems.filter((p) => !/\b(409|422)\b/.test(p)));

    await page.getByRole("button", { name: "Queue it" }).click();
    expect(await elsewhere.finished).toContain("event: values");
    await expect
      .poll(
        async () => (await page.getByTestId("message-ai").last().innerText()).includes("Business plan costs 15 euros"),
        {
          timeout: 30_000,
        },
      )
      .toBe(true);
    expect(await page.getByRole("alert").count()).toBe(0);
    expect(problems).toEqual([]);
  });
});

/** A streamed run from another client; resolves once the run has started, with its end to await. */
async function startRun(user: string, thread: string, text: string) {
  const response = await fetch(`${baseUrl()}/threads/${thread}/runs/stream`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-user-id": user },
    body: JSON.stringify({ assistant_id: "chat", input: { messages: [{ type: "human", content: text }] } }),
  });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  let seen = "";
  while (!seen.includes("event: metadata")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the run ended before it started: ${seen}`);
    seen += new TextDecoder().decode(value);
  }
  const finished = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return seen;
      seen += new TextDecoder().decode(value);
    }
  })();
  return { finished };
}

describe("a reply that outlives the page", () => {
  it("goes on after a reload mid-stream, from where it was, to the same end as the thread's state", async () => {
    const user = "chat-reload-midstream";
    const { page, problems } = await openPlayground(chromium.browser, user);
    // Stored, then repeated back word by word for about two seconds.
    const fact = "the quarterly review covers pricing, plans, seats and the renewal calendar; ".repeat(20);
    const box = page.getByRole("textbox", { name: "Message" });
    await box.fill(`Remember that ${fact}`);
    await box.press("Enter");
    const reply = page.getByTestId("message-ai").locator(".text").last();
    await expect
      .poll(async () => (await reply.count()) > 0 && (await reply.innerText()).includes("quarterly"), {
        timeout: 30_000,
      })
      .toBe(true);
    const before = await reply.innerText();
    expect(await conversation(page).getAttribute("aria-busy")).toBe("true");
    const thread = new URL(page.url()).searchParams.get("thread")!;

    // The rejoin: the run's events from the start (GET .../runs/{run_id}/stream), while it still runs.
    const rejoined = page.waitForRequest((r) => r.method() === "GET" && /\/runs\/[0-9a-f-]{36}\/stream/.test(r.url()));
    await page.reload();
    await rejoined;
    await expect.poll(() => conversation(page).getAttribute("aria-busy"), { timeout: 30_000 }).toBe("false");
    const after = await page.getByTestId("message-ai").locator(".text").last().innerText();
    expect(after.length).toBeGreaterThan(before.length);
    expect(after.startsWith(before.slice(0, 20))).toBe(true);
    // One reply, not two: the rejoined stream continued the same message.
    expect(await page.getByTestId("message-human").count()).toBe(1);
    const state = await apiCall<{ values: { messages: { type: string; content: string }[] } }>(
      user,
      `/threads/${thread}/state`,
    );
    expect(after).toBe(state.body.values.messages.filter((m) => m.type === "ai").at(-1)!.content);
    expect(problems).toEqual([]);
  });
});
