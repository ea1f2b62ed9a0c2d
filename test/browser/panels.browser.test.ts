import { describe, expect, it } from "vitest";
import { apiCall, expectAccessible, browserForFile, openPlayground, say, screenshot } from "./browser";

const chromium = browserForFile();

describe("trace", () => {
  it("draws a knowledge question's run as a waterfall: nodes, model calls with tokens, the search with its arguments", async () => {
    const { page, problems } = await openPlayground(chromium.browser, "trace-user");
    await say(page, "What is the refund policy?");
    await page.getByRole("button", { name: "Trace of this reply" }).last().click();

    expect(await page.getByRole("tab", { name: "Trace" }).getAttribute("aria-selected")).toBe("true");
    const waterfall = page.getByTestId("waterfall");
    await waterfall.waitFor({ timeout: 15_000 });
    const steps = page.getByTestId("trace-step");
    const rows = await steps.allInnerTexts();
    expect(rows.some((r) => /^model\b/i.test(r) && /in \d+ · out \d+/.test(r))).toBe(true);
    expect(rows.some((r) => /^tool\s+search_knowledge_base/i.test(r))).toBe(true);
    expect(rows.some((r) => /^node\b/i.test(r))).toBe(true);
    expect(await waterfall.locator(".trace-summary").innerText()).toMatch(
      /model call\(s\).*tool call\(s\).*tokens in [1-9]/,
    );
    // Each bar sits on the time axis: a later step starts further right.
    const offsets = await steps
      .locator(".bar")
      .evaluateAll((bars) =>
        bars.map((b) => Number.parseFloat((b as unknown as { style: { marginLeft: string } }).style.marginLeft)),
      );
    expect(offsets.every((x) => x >= 0 && x <= 100)).toBe(true);
    expect(Math.max(...offsets)).toBeGreaterThan(0);

    const search = steps.filter({ hasText: "search_knowledge_base" }).first();
    await search.getByText("arguments").click();
    expect(await search.locator("pre").innerText()).toContain("What is the refund policy?");
    await expectAccessible(page, "trace");
    await screenshot(page, "trace-1440");
    expect(problems).toEqual([]);
  });
});

describe("memories", () => {
  it("shows a memory extracted after “I prefer aisle seats” without a reload, and deletes it", async () => {
    const user = "memory-user";
    const { page, problems } = await openPlayground(chromium.browser, user);
    await page.getByRole("tab", { name: "Memories" }).click();
    await page.getByText("Nothing remembered yet").waitFor();
    // Back to the chat by keyboard (arrow keys move between tabs), say it, and return.
    await page.getByRole("tab", { name: "Memories" }).focus();
    await page.keyboard.press("ArrowLeft");
    await page.keyboard.press("ArrowLeft");
    expect(await page.getByRole("tab", { name: "Chat" }).getAttribute("aria-selected")).toBe("true");
    await say(page, "I prefer aisle seats");
    await page.getByRole("tab", { name: "Memories" }).click();

    // Extraction runs on its queue after the reply; the panel polls, so it appears on its own.
    const memory = page.getByTestId("memory").filter({ hasText: /aisle seats/i });
    await memory.waitFor({ timeout: 20_000 });
    const category = (await memory.locator(".badge").first().innerText()).trim();
    await page.getByLabel("Category").selectOption(category);
    await memory.waitFor();
    await page.getByLabel("Category").selectOption("");
    await expectAccessible(page, "memories");
    await screenshot(page, "memories-1440");

    await memory.getByRole("button", { name: /Delete memory/ }).click();
    await memory.waitFor({ state: "detached", timeout: 10_000 });
    const left = await apiCall<{ memories: Array<{ content: string }> }>(user, "/api/memories");
    expect(left.body.memories.filter((m) => /aisle/i.test(m.content))).toEqual([]);
    // Still gone after the next poll.
    await page.waitForTimeout(2500);
    expect(await memory.count()).toBe(0);

    // A replaced fact is kept: shown, marked, when asked for.
    await page.getByRole("tab", { name: "Chat" }).click();
    await say(page, "my favourite colour is teal");
    await say(page, "Actually my favourite colour is green now");
    await page.getByRole("tab", { name: "Memories" }).click();
    await page.getByTestId("memory").filter({ hasText: /green/ }).waitFor({ timeout: 20_000 });
    expect(await page.getByTestId("memory").filter({ hasText: /teal/ }).count()).toBe(0);
    await page.getByRole("checkbox", { name: "Show superseded" }).check();
    const replaced = page.getByTestId("memory").filter({ hasText: /teal/ });
    await replaced.filter({ hasText: "superseded by a newer memory" }).waitFor({ timeout: 10_000 });
    expect(await replaced.getAttribute("class")).toContain("superseded");
    await expectAccessible(page, "memories with superseded");
    expect(problems).toEqual([]);
  });
});

describe("knowledge", () => {
  it("lists the documents, ingests an upload, reports a skipped one with its reason, searches as the agent does", async () => {
    const { page, problems } = await openPlayground(chromium.browser, "knowledge-admin", {
      query: { panel: "knowledge" },
    });
    const row = (name: string) => page.getByTestId("document").filter({ hasText: name });
    await row("pricing.md").filter({ hasText: "ingested" }).waitFor({ timeout: 20_000 });

    await page.getByLabel(/Choose documents/).setInputFiles([
      {
        name: "travel-policy.md",
        mimeType: "text/markdown",
        buffer: Buffer.from(
          "# Travel policy\n\n## Seats\n\nStaff flying for work book aisle seats on flights over two hours.\n\n" +
            "## Lounges\n\nZephyr lounge access is included for trips longer than six hours.\n",
        ),
      },
      // A PDF that is not one: the ingest function skips it and says why.
      { name: "broken.pdf", mimeType: "application/pdf", buffer: Buffer.from("%PDF-1.7 this is not really a PDF") },
    ]);
    await row("travel-policy.md").filter({ hasText: "ingested" }).waitFor({ timeout: 20_000 });
    expect(Number(await row("travel-policy.md").locator("td").nth(1).innerText())).toBeGreaterThan(0);
    const skipped = row("broken.pdf").filter({ hasText: "skipped" });
    await skipped.waitFor({ timeout: 20_000 });
    expect((await skipped.locator("td").nth(2).innerText()).length).toBeGreaterThan(0);

    await page.getByLabel("Query").fill("Zephyr lounge access");
    await page.getByLabel("Query").press("Enter");
    const first = page.getByTestId("search-hit").first();
    await first.waitFor();
    expect(await first.innerText()).toMatch(/travel-policy\.md · score 0\.\d+/);
    expect(await first.innerText()).toContain("Zephyr lounge access is included");
    await page.getByRole("heading", { name: "Knowledge base" }).scrollIntoViewIfNeeded();
    await expectAccessible(page, "knowledge");
    await screenshot(page, "knowledge-1440");

    await page.getByRole("button", { name: "Delete broken.pdf" }).click();
    await row("broken.pdf").waitFor({ state: "detached", timeout: 20_000 });

    // A type the knowledge base does not take is refused at once, with the API's code.
    await page.getByLabel(/Choose documents/).setInputFiles({
      name: "diagram.xyz",
      mimeType: "application/octet-stream",
      buffer: Buffer.from("not a document"),
    });
    expect(await page.getByRole("alert").innerText()).toContain("unsupported_document_type");
    problems.splice(0, problems.length, ...problems.filter((p) => !p.includes("400")));
    expect(problems).toEqual([]);
  });
});

describe("intercom", () => {
  it("answers a customer's conversation: the validation note, the reply citing the knowledge base, the snooze, the run's hops", async () => {
    const { page, problems } = await openPlayground(chromium.browser, "intercom-viewer", {
      query: { panel: "intercom" },
    });
    await page.getByLabel("Customer email").fill("ann@example.com");
    await page.getByLabel("Customer message").fill("How much does the Pro plan cost?");
    await page.getByRole("button", { name: "Write in as the customer" }).click();
    const conversation = page.getByTestId("conversation").first();
    await conversation.getByTestId("intercom-snooze").waitFor({ timeout: 45_000 });
    expect(await conversation.getByTestId("intercom-note").first().innerText()).toMatch(/Validation passed/);
    const reply = await conversation.getByTestId("intercom-reply").innerText();
    expect(reply).toContain("8 euros");
    expect(await conversation.locator(".badge").first().innerText()).toContain("snoozed");

    // The support run's hops, read from the worker's checkpoint: one hop covered the question.
    await conversation.getByTestId("run-status").filter({ hasText: "ended: sent" }).waitFor({ timeout: 10_000 });
    const hops = conversation.getByRole("list", { name: /^Hops of the support run/ });
    const hop = hops.getByTestId("hop");
    expect(await hop.count()).toBe(1);
    const summary = hop.locator(":scope > summary");
    expect(await summary.textContent()).toMatch(/Hop 1.*coverage 1\.00, sufficient/s);
    // Collapsed until opened, by keyboard as by mouse.
    expect(await hop.getByRole("region", { name: "Plan" }).isVisible()).toBe(false);
    await summary.focus();
    await page.keyboard.press("Enter");
    const plan = hop.getByRole("region", { name: "Plan" });
    const gather = hop.getByRole("region", { name: "Gather" });
    const coverage = hop.getByRole("region", { name: "Coverage" });
    for (const stage of [plan, gather, coverage]) expect(await stage.isVisible()).toBe(true);
    expect(await plan.textContent()).toMatch(/search_knowledge_base/);
    expect(await gather.textContent()).toMatch(/search_knowledge_base\s+ok · \d+ ms/);
    expect(await coverage.textContent()).toMatch(/score 1\.00 · sufficient/);
    // Still open after the next poll: polling does not fold what the reader opened.
    await page.waitForTimeout(2000);
    expect(await plan.isVisible()).toBe(true);
    await expectAccessible(page, "intercom");
    // The picture shows the run: its heading at the top, the opened hop under it.
    await conversation.getByRole("heading", { name: /^Support run/ }).evaluate((h) => h.scrollIntoView());
    await screenshot(page, "intercom-1440");

    await page.setViewportSize({ width: 375, height: 812 });
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(375);
    await expectAccessible(page, "intercom at 375 px");
    expect(problems).toEqual([]);
  });
});
