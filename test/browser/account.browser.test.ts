import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { apiCall, browserForFile, conversation, expectAccessible, openPlayground, say, screenshot } from "./browser";

const chromium = browserForFile();

const sessionsOf = async (user: string) =>
  (await apiCall<{ sessions: Array<{ session_id: string }> }>(user, "/api/sessions")).body.sessions;

describe("account", () => {
  it("shows today's usage, downloads the user's export, and erases everything only once the user id is typed", async () => {
    const user = "account-user";
    const other = "account-neighbour";
    const neighbour = await apiCall<{ session_id: string }>(other, "/api/chat", {
      method: "POST",
      body: JSON.stringify({ message: "the neighbour's secret is marmalade" }),
    });
    expect(neighbour.status).toBe(200);

    const { page, problems } = await openPlayground(chromium.browser, user);
    await say(page, "my favourite fruit is pineapple");
    await page.getByRole("tab", { name: "Account" }).click();
    await page.getByRole("heading", { name: `Account of ${user}` }).waitFor();

    // The turn is counted: turns and tokens, each against its limit (tokens have none here), and the
    // project with limits of its own on a row of its own, with nothing in it.
    const usage = page.getByTestId("usage");
    const row = (scope: string) => usage.getByRole("row").filter({ has: page.getByRole("rowheader", { name: scope }) });
    const cells = async (scope: string) => row(scope).getByRole("cell").allInnerTexts();
    await expect.poll(() => cells("All sessions"), { timeout: 10_000 }).toHaveLength(3);
    const [turns, thisMinute, tokens] = await cells("All sessions");
    expect(Number(turns)).toBeGreaterThanOrEqual(1);
    // This minute's count is 0 when the minute turned between the turn and the read (a calendar
    // minute): the day's turns above are what shows the turn was counted.
    expect(thisMinute).toMatch(/^\d+ of 1000 a minute$/);
    expect(tokens).toMatch(/^[1-9]\d* \(no limit\)$/);
    expect(await cells("Project metered")).toEqual(["0", "0 of 1000 a minute", "0 of 10000000 a day"]);
    await expectAccessible(page, "account");
    await screenshot(page, "account-1440");

    // The export, saved as a file: the user's message in it, nothing of the other user's.
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Download export" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`export-${user}.json`);
    const exported = await readFile(await download.path(), "utf8");
    const parsed = JSON.parse(exported) as { sessions: Array<{ session_id: string }> };
    expect(parsed.sessions.map((s) => s.session_id)).toEqual((await sessionsOf(user)).map((s) => s.session_id));
    expect(exported).toContain("my favourite fruit is pineapple");
    expect(exported).not.toContain("marmalade");
    expect(exported).not.toContain(neighbour.body.session_id);
    expect(exported).not.toContain(other);
    await expect.poll(() => page.getByRole("status").innerText()).toBe(`Export of ${user} downloaded.`);

    // Dismissed, by Cancel and by Escape, the erasure erases nothing; a wrong id cannot confirm it.
    const eraseAll = page.getByRole("button", { name: "Erase all my data" });
    const confirmation = page.getByRole("textbox", { name: `Type ${user} to confirm` });
    const confirm = page.getByRole("button", { name: "Erase everything" });
    await eraseAll.click();
    expect(await confirmation.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    await expectAccessible(page, "erase confirmation");
    await confirmation.fill("account-use");
    expect(await confirm.isDisabled()).toBe(true);
    await confirmation.press("Enter");
    await page.getByRole("button", { name: "Cancel" }).click();
    await confirmation.waitFor({ state: "detached" });
    await eraseAll.click();
    await confirmation.fill(user);
    await confirmation.press("Escape");
    await confirmation.waitFor({ state: "detached" });
    expect(await sessionsOf(user)).toHaveLength(1);
    expect(await page.getByTestId("session").count()).toBe(1);

    // Confirmed: everything of the user is gone, the page forgets the thread, the neighbour keeps theirs.
    expect(new URL(page.url()).searchParams.get("thread")).not.toBeNull();
    await eraseAll.click();
    await confirmation.fill(user);
    await confirm.click();
    await expect
      .poll(() => page.getByRole("status").innerText(), { timeout: 30_000 })
      .toMatch(new RegExp(`^Erased everything of ${user}: .*\\btranscripts: 1\\b.*\\bsessions: 1\\b`));
    expect(await sessionsOf(user)).toEqual([]);
    expect((await sessionsOf(other)).map((s) => s.session_id)).toEqual([neighbour.body.session_id]);
    await page.getByText(`No sessions yet for ${user}.`).waitFor();
    expect(new URL(page.url()).searchParams.get("thread")).toBeNull();
    // The usage counts stay: erasing one's data is no way around one's limits. (This minute's may
    // have moved on to the next minute's.)
    const [turnsAfter, , tokensAfter] = await cells("All sessions");
    expect([turnsAfter, tokensAfter]).toEqual([turns, tokens]);
    await page.getByRole("tab", { name: "Chat" }).click();
    expect(await conversation(page).getByText("pineapple").count()).toBe(0);
    await expectAccessible(page, "account after erasure");
    expect(problems).toEqual([]);
  });
});
