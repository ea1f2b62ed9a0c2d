import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { apiCall, browserForFile, openPlayground } from "./browser";

const chromium = browserForFile();

/** The user's threads as another client lists them. */
async function threadIds(user: string): Promise<string[]> {
  const { body } = await apiCall<{ thread_id: string }[]>(user, "/threads/search", {
    method: "POST",
    body: JSON.stringify({ limit: 100 }),
  });
  return body.map((t) => t.thread_id);
}

/** Every request the page sends to the stack, as "METHOD path?query". */
function recordRequests(page: import("playwright-core").Page): string[] {
  const seen: string[] = [];
  page.on("request", (r) => {
    const url = new URL(r.url());
    seen.push(`${r.method()} ${url.pathname}${url.search}`);
  });
  return seen;
}

describe("a crafted link", () => {
  // The page once put `thread` into API paths as it came: the browser resolved the `../`, so a
  // link chose which route the page called with the user's credentials (POST /threads made a
  // thread on every load), and the answer's shape blanked the page, again on each reload.
  for (const thread of ["../../threads?", "../me/usage?", "%2e%2e/%2e%2e/threads?", "not-a-thread"]) {
    it(`with thread=${JSON.stringify(thread)} calls no other route and leaves a working page`, async () => {
      const user = `link-${randomUUID()}`;
      const before = await threadIds(user);
      const { page, problems } = await openPlayground(chromium.browser, user, {
        query: { thread: decodeURIComponent(thread) },
      });
      const requests = recordRequests(page);
      await page.reload();
      await page.getByRole("textbox", { name: "Message" }).waitFor();
      await page.getByRole("tab", { name: "Memories" }).click();
      await page.getByText("Nothing remembered yet").waitFor();
      expect(requests.filter((r) => /^POST \/threads(\?|$)/.test(r))).toEqual([]);
      expect(requests.filter((r) => r.includes("/me/"))).toEqual([]);
      expect(await threadIds(user)).toEqual(before);
      expect(problems).toEqual([]);
    });
  }
});

describe("an answer of the wrong shape", () => {
  it("fails its own panel with a note, not the page", async () => {
    const user = `shape-${randomUUID()}`;
    const { page } = await openPlayground(chromium.browser, user);
    await page.route("**/threads/search", (route) =>
      route.fulfill({
        status: 200,
        contentType: "application/json",
        body: JSON.stringify({ threads: "no" }),
      }),
    );
    await page.reload();
    await page.getByRole("textbox", { name: "Message" }).waitFor();
    await expect.poll(() => page.getByRole("alert").allInnerTexts()).toEqual([expect.stringMatching(/sessions/i)]);
  });
});

describe("switching the local user", () => {
  it("never shows the previous user's sessions, however late their list answers", async () => {
    const alice = `alice-${randomUUID()}`;
    const bob = `bob-${randomUUID()}`;
    const made = await apiCall<{ thread_id: string }>(alice, "/threads", {
      method: "POST",
      body: JSON.stringify({ metadata: { name: "ALICE-PRIVATE-session" } }),
    });
    expect(made.status).toBe(200);
    const { page, problems } = await openPlayground(chromium.browser, alice);
    await page.getByText("ALICE-PRIVATE-session").waitFor();
    // Alice's list answers late on the next load, after the switch to bob.
    await page.route("**/threads/search", async (route) => {
      if (route.request().headers()["x-user-id"] === alice) await new Promise((r) => setTimeout(r, 1_500));
      await route.continue();
    });
    await page.reload();
    await page.getByLabel("User (x-user-id)").fill(bob);
    await page.getByRole("button", { name: "Switch" }).click();
    await page.getByRole("list", { name: `Sessions of ${bob}` }).waitFor({ state: "attached" });
    await new Promise((r) => setTimeout(r, 2_500));
    expect(await page.getByText("ALICE-PRIVATE-session").count()).toBe(0);
    expect(problems).toEqual([]);
  });

  it("keeps none of the previous user's memory categories or filters", async () => {
    const alice = `alice-${randomUUID()}`;
    const bob = `bob-${randomUUID()}`;
    const stored = await apiCall(alice, "/store/items", {
      method: "PUT",
      body: JSON.stringify({
        namespace: ["memories", alice],
        key: "k1",
        value: {
          content: "I keep bees",
          category: "alice-only-category",
          tags: ["bees"],
        },
      }),
    });
    expect([200, 204]).toContain(stored.status);
    const { page, problems } = await openPlayground(chromium.browser, alice, {
      query: { panel: "memories" },
    });
    await page.getByTestId("memory").filter({ hasText: "I keep bees" }).waitFor();
    await page.getByLabel("Category").selectOption("alice-only-category");
    await page.getByLabel("User (x-user-id)").fill(bob);
    await page.getByRole("button", { name: "Switch" }).click();
    await page.getByText("Nothing remembered yet").waitFor();
    expect(await page.getByLabel("Category").inputValue()).toBe("");
    expect(await page.getByLabel("Category").locator("option").allInnerTexts()).not.toContain("alice-only-category");
    expect(problems).toEqual([]);
  });

  it("refuses a user id no request can carry, and stays the user it was", async () => {
    const alice = `alice-${randomUUID()}`;
    const { page, problems } = await openPlayground(chromium.browser, alice);
    await page.getByRole("list", { name: `Sessions of ${alice}` }).waitFor({ state: "attached" });
    await page.getByLabel("User (x-user-id)").fill("用户");
    await page.getByRole("button", { name: "Switch" }).click();
    await page.getByText(/printable ASCII/).waitFor();
    expect(await page.getByRole("list", { name: `Sessions of ${alice}` }).count()).toBe(1);
    expect(new URL(page.url()).searchParams.get("user")).toBe(alice);
    expect(problems).toEqual([]);
  });
});
