import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import type { Browser, Page } from "playwright-core";
import { launchChromium } from "../support/chromium";
import { afterAll, beforeAll, expect, inject } from "vitest";

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/**
 * One Chromium (test/support/chromium.ts) for a test file: launched before its tests, closed after.
 * Read `.browser` inside tests.
 */
export function browserForFile(): { browser: Browser } {
  const holder = {} as { browser: Browser };
  beforeAll(async () => {
    holder.browser = await launchChromium();
  });
  afterAll(async () => {
    await holder.browser?.close();
  });
  return holder;
}

export interface PlaygroundPage {
  page: Page;
  /** console errors and uncaught exceptions so far: a test ends by asserting there are none */
  problems: string[];
}

/** A fresh context (no storage from another test) on the playground, as `user`. */
export async function openPlayground(
  browser: Browser,
  user: string,
  options: { width?: number; height?: number; query?: Record<string, string> } = {},
): Promise<PlaygroundPage> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1440, height: options.height ?? 900 },
  });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  const query = new URLSearchParams({ user, ...options.query });
  await page.goto(`${baseUrl()}/?${query}`);
  return { page, problems };
}

export const baseUrl = () => inject("baseUrl");

/** The API as another client would call it (the test's own requests, not the page's). */
export async function apiCall<T>(
  user: string,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; body: T }> {
  const response = await fetch(`${baseUrl()}${path}`, {
    ...init,
    headers: { "content-type": "application/json", "x-user-id": user, ...init.headers },
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/**
 * axe-core's rules on what the page shows now: no serious or critical violation. Each one found
 * is listed with the elements it names, so a failure says what to fix.
 */
export async function expectAccessible(page: Page, label: string): Promise<void> {
  // These callbacks run in the page; this file is type-checked for Node, hence globalThis.
  // Evaluated through the DevTools protocol, which the page's Content-Security-Policy does not govern
  // (a <script> tag would be refused): the page is checked with its CSP on, as users get it.
  if (!(await page.evaluate(() => "axe" in globalThis))) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: typeof import("axe-core") }).axe;
    const result = await axe.run({ exclude: [] }, { resultTypes: ["violations"] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 5).map((n) => n.target.join(" ")),
    }));
  });
  const serious = violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(serious, `${label}: ${JSON.stringify(serious, null, 2)}`).toEqual([]);
}

/**
 * <SCREENSHOTS_DIR>/<name>.png, only when `npm run screenshots` asks for them (into the ignored
 * .local/screenshots/): a test run never rewrites the tracked pictures under docs/screenshots/,
 * which a person refreshes by copying the ones worth keeping.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  const dir = process.env.SCREENSHOTS_DIR;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: resolve(dir, `${name}.png`) });
}

/**
 * Sends a chat message by keyboard, as a person does, and waits until its reply has finished: the
 * reply's "Trace of this reply" link appears only once its run ended.
 */
export async function say(page: Page, text: string): Promise<void> {
  const replies = page.getByRole("button", { name: "Trace of this reply" });
  const before = await replies.count();
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill(text);
  await box.press("Enter");
  await expect.poll(() => replies.count(), { timeout: 30_000 }).toBe(before + 1);
  await expect.poll(() => conversation(page).getAttribute("aria-busy")).toBe("false");
}

export const conversation = (page: Page) => page.getByRole("list", { name: "Conversation" });
