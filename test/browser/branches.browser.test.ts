import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { apiCall, conversation, expectAccessible, browserForFile, openPlayground, say, screenshot } from "./browser";

const chromium = browserForFile();

/** The conversation's messages as the page shows them, each "human: …" or "ai: …". */
const shown = async (page: Page) =>
  (await conversation(page)
    .locator('[data-testid^="message-"] .text')
    .evaluateAll((nodes) =>
      nodes.map((n) => {
        const el = n as unknown as { closest: (s: string) => { dataset: { testid: string } }; textContent: string };
        return `${el.closest("li").dataset.testid.replace("message-", "")}: ${el.textContent}`;
      }),
    )) as string[];

const finished = (page: Page) =>
  expect.poll(() => conversation(page).getAttribute("aria-busy"), { timeout: 30_000 }).toBe("false");

describe("threads, branches and approvals", () => {
  it("lists the user's threads from threads.search, newest first, and opens an older one", async () => {
    const { page, problems } = await openPlayground(chromium.browser, "threads-list");
    const searched = page.waitForRequest((r) => r.method() === "POST" && r.url().endsWith("/threads/search"));
    await say(page, "What is the refund policy?");
    expect((await searched).postDataJSON()).toMatchObject({ sort_by: "updated_at", sort_order: "desc" });
    const first = new URL(page.url()).searchParams.get("thread");
    await page.getByRole("button", { name: "New chat", exact: true }).click();
    await say(page, "How much does the Pro plan cost?");

    const rows = page.getByTestId("session");
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(2);
    // A thread is listed from its first event, before its turn has recorded its name ("New chat"
    // until then, which a loaded machine showed): the names are waited for, as the list polls.
    const names = async () => (await rows.locator(".session-name").allInnerTexts()).map((t) => t.split("\n")[0]);
    await expect
      .poll(names, { timeout: 15_000 })
      .toEqual(["How much does the Pro plan cost?", "What is the refund policy?"]);
    expect(await rows.first().innerText()).toContain("2 messages");

    await page.getByRole("button", { name: /^What is the refund policy\?/ }).click();
    await expect
      .poll(() => shown(page))
      .toEqual([
        "human: What is the refund policy?",
        expect.stringMatching(/^ai: [\s\S]*Refunds are available within 14 days/),
      ]);
    expect(new URL(page.url()).searchParams.get("thread")).toBe(first);

    // Another user's list has none of them.
    const other = await apiCall<unknown[]>("threads-list-other", "/threads/search", { method: "POST", body: "{}" });
    expect(other.body).toEqual([]);
    await expectAccessible(page, "thread list");
    expect(problems).toEqual([]);
  });

  it("regenerates a reply as a branch from the checkpoint before it, and switches between the two", async () => {
    const { page, problems } = await openPlayground(chromium.browser, "branches-regenerate");
    await say(page, "How much does the Pro plan cost?");
    const reply = page.getByTestId("message-ai").last();
    const run = page.waitForRequest((r) => r.method() === "POST" && /\/runs\/stream$/.test(r.url()));
    await reply.getByRole("button", { name: "Regenerate" }).click();
    // What Agent Chat UI sends: no input, the checkpoint the reply's turn started from.
    const body = (await run).postDataJSON() as { input?: unknown; checkpoint?: { checkpoint_id?: string } };
    expect(body.input ?? null).toBeNull();
    expect(body.checkpoint?.checkpoint_id).toMatch(/^[0-9a-f-]{36}$/);
    await finished(page);

    const position = reply.getByTestId("branch-position");
    await expect.poll(() => position.innerText(), { timeout: 15_000 }).toBe("2 / 2");
    expect(await shown(page)).toEqual([
      "human: How much does the Pro plan cost?",
      expect.stringContaining("The Pro plan costs 8 euros per user per month"),
    ]);
    await reply.getByRole("button", { name: "Previous version" }).click();
    await expect.poll(() => position.innerText()).toBe("1 / 2");
    expect(await reply.getByRole("button", { name: "Previous version" }).isDisabled()).toBe(true);
    await reply.getByRole("button", { name: "Next version" }).click();
    await expect.poll(() => position.innerText()).toBe("2 / 2");
    await expectAccessible(page, "regenerated reply");
    await screenshot(page, "chat-branches-1440");
    expect(problems).toEqual([]);
  });

  it("edits an earlier message into a branch of its own, keeps the old branch switchable, and keeps the edit over a reload", async () => {
    const { page, problems } = await openPlayground(chromium.browser, "branches-edit");
    await say(page, "How much does the Pro plan cost?");
    await say(page, "What is the refund policy?");
    expect(await shown(page)).toHaveLength(4);

    const firstQuestion = page.getByTestId("message-human").first();
    await firstQuestion.getByRole("button", { name: "Edit" }).click();
    const field = page.getByRole("textbox", { name: "Edit message" });
    expect(await field.inputValue()).toBe("How much does the Pro plan cost?");
    // Escape leaves the message as it was; nothing is sent.
    await field.press("Escape");
    expect(await shown(page)).toHaveLength(4);
    await firstQuestion.getByRole("button", { name: "Edit" }).click();
    await field.fill("How much does the Business plan cost?");
    await page.getByRole("button", { name: "Save and send" }).click();
    await finished(page);

    // A branch from before the first message: the later turn is not in it (Edit does not append).
    await expect
      .poll(() => shown(page), { timeout: 15_000 })
      .toEqual([
        "human: How much does the Business plan cost?",
        expect.stringContaining("Business plan costs 15 euros"),
      ]);
    const edited = page.getByTestId("message-human").first();
    const position = edited.getByTestId("branch-position");
    await expect.poll(() => position.innerText(), { timeout: 15_000 }).toBe("2 / 2");
    await edited.getByRole("button", { name: "Previous version" }).click();
    await expect.poll(() => shown(page)).toHaveLength(4);
    expect((await shown(page))[0]).toBe("human: How much does the Pro plan cost?");
    expect((await shown(page))[2]).toBe("human: What is the refund policy?");

    // The thread's state is the newest run's, the edit: that is what a reload shows.
    await page.reload();
    await expect
      .poll(() => shown(page), { timeout: 15_000 })
      .toEqual([
        "human: How much does the Business plan cost?",
        expect.stringContaining("Business plan costs 15 euros"),
      ]);
    await expectAccessible(page, "edited message");
    expect(problems).toEqual([]);
  });

  it("stops a tool call for approval once the session asks for it, and approves, edits and rejects calls", async () => {
    const user = "branches-approval";
    const { page, problems } = await openPlayground(chromium.browser, user);
    await say(page, "hi");
    const thread = new URL(page.url()).searchParams.get("thread")!;
    const current = page.locator('.sessions [aria-current="page"]');
    await current.waitFor({ timeout: 15_000 });
    await page.getByRole("button", { name: /^Settings of / }).click();
    await page.getByRole("checkbox", { name: /Ask before tools run/ }).check();
    await expect
      .poll(async () => (await apiCall<{ approve_tools: unknown }>(user, `/api/sessions/${thread}`)).body.approve_tools)
      .toBe("*");

    const approval = page.getByTestId("approval");
    const ask = async (text: string) => {
      const box = page.getByRole("textbox", { name: "Message" });
      await box.fill(text);
      await box.press("Enter");
      await approval.waitFor({ timeout: 30_000 });
      await finished(page);
    };
    const lastCall = () => page.getByTestId("tool-call").last();

    // Approve: the call waits, then runs as asked.
    await ask("remember that my cat is called Tom");
    expect(await lastCall().locator(".tool-status").innerText()).toBe("waiting for approval");
    expect(await approval.innerText()).toContain("store_memory");
    await expect.poll(() => current.innerText(), { timeout: 15_000 }).toContain("interrupted");
    await expectAccessible(page, "approval");
    await screenshot(page, "chat-approval-1440");
    await page.getByRole("button", { name: "Send decision" }).click();
    await finished(page);
    expect(await approval.count()).toBe(0);
    await expect.poll(() => lastCall().locator(".tool-status").innerText()).toMatch(/cat is called Tom/);
    // What the tool stored (extraction, which reads every reply, keeps its own: metadata.source).
    const memories = async () =>
      JSON.stringify(
        (
          await apiCall<{ memories: { content: string; metadata: { source?: string } }[] }>(user, "/api/memories")
        ).body.memories.filter((m) => m.metadata.source !== "extraction"),
      );
    await expect.poll(memories).toContain("Tom");

    // Edit: the arguments as changed here are what runs, and what the thread keeps.
    await ask("remember that my dog is called Rex");
    await page.getByRole("radio", { name: "Edit arguments" }).check();
    const args = page.getByRole("textbox", { name: "Arguments of store_memory" });
    // Not a JSON object: said here, nothing sent.
    await args.fill("[1, 2");
    await page.getByRole("button", { name: "Send decision" }).click();
    expect(await approval.getByRole("alert").innerText()).toContain("not a JSON object");
    await args.fill(JSON.stringify({ content: "my dog is called Max" }));
    await page.getByRole("button", { name: "Send decision" }).click();
    await finished(page);
    await expect.poll(() => lastCall().locator(".tool-status").innerText()).toMatch(/dog is called Max/);
    await lastCall().locator("summary").click();
    expect(await lastCall().locator("pre").first().innerText()).toContain("my dog is called Max");

    // Reject: the call never runs; the agent is told why.
    await ask("remember that my fish is called Nemo");
    await page.getByRole("radio", { name: "Reject" }).check();
    await page.getByRole("textbox", { name: /Note for the agent/ }).fill("not now");
    await page.getByRole("button", { name: "Send decision" }).click();
    await finished(page);
    await expect
      .poll(() => lastCall().locator(".tool-status").innerText())
      .toMatch(/^failed: The user rejected this call of store_memory; it was not run\. Their note: not now/);
    expect(await memories()).not.toContain("Nemo");
    expect(problems).toEqual([]);
  });
});
