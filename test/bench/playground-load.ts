// How long the playground takes to be usable on the local stack, in Debian's Chromium: from
// navigation to the first frame showing the chat box and the user's sessions (the API answered and
// the list rendered), with an empty cache (a first visit) and a warm one (a reload). Goal: under a
// second. The stack runs in this process with the offline stand-ins; no model call is timed.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { startLocalStack } from "../../infra/local/stack";
import { CHROMIUM, launchChromium } from "../support/chromium";
import { buildPlayground } from "../support/playground-build";
import { median, printTable } from "./table";

const ROUNDS = 15;
const USER = "bench-user";

interface Load {
  /** navigation start to the first frame with the chat box and the listed sessions */
  usable: number;
  domContentLoaded: number;
  load: number;
  /** bytes over the wire: the page, its script and style, /config.json and the API calls */
  bytes: number;
}

/** The little of the page's DOM read here. */
interface InPage {
  document: { querySelector(selector: string): unknown };
  performance: {
    now(): number;
    getEntriesByType(
      type: string,
    ): Array<{ transferSize: number; domContentLoadedEventEnd: number; loadEventEnd: number }>;
  };
}

async function measure(page: Page, navigate: () => Promise<unknown>): Promise<Load> {
  await navigate();
  // These callbacks run in the page (serialized: they close over nothing); this file is
  // type-checked for Node, without the DOM, hence `globalThis as Page`.
  const usable = (await (
    await page.waitForFunction(
      () => {
        const { document, performance } = globalThis as unknown as InPage;
        return document.querySelector("#message") && document.querySelector('[data-testid="session"]')
          ? performance.now()
          : false;
      },
      undefined,
      { polling: "raf", timeout: 10_000 },
    )
  ).jsonValue()) as number;
  const timing: Omit<Load, "usable"> = await page.evaluate(() => {
    const { performance } = globalThis as unknown as InPage;
    const nav = performance.getEntriesByType("navigation")[0]!;
    const resources = performance.getEntriesByType("resource");
    return {
      domContentLoaded: nav.domContentLoadedEventEnd,
      load: nav.loadEventEnd,
      bytes: nav.transferSize + resources.reduce((sum, r) => sum + r.transferSize, 0),
    };
  });
  return { usable, ...timing };
}

export async function run() {
  if (!existsSync(CHROMIUM)) {
    console.log(`\nskipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
    return;
  }
  await buildPlayground();
  const dataDir = mkdtempSync(join(tmpdir(), "bench-playground-"));
  const stack = await startLocalStack({ DATA_DIR: dataDir, PORT: "0", LOG_LEVEL: "SILENT" });
  let browser: Browser | undefined;
  try {
    // One thread to list, so "usable" includes the thread search and its rendering: made as the
    // playground makes them, through the Agent Server API (a stateless run's thread is listed too).
    const created = await fetch(`${stack.url}/runs/wait`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-user-id": USER },
      body: JSON.stringify({
        assistant_id: "chat",
        input: { messages: [{ type: "human", content: "hello there" }] },
        on_completion: "keep",
      }),
    });
    if (!created.ok) throw new Error(`could not create a thread: ${created.status}`);
    browser = await launchChromium();
    const url = `${stack.url}/?user=${USER}&panel=chat`;
    const cold: Load[] = [];
    const warm: Load[] = [];
    await (await browser.newPage()).goto(url); // the first launch's own start-up is not the page's
    for (let i = 0; i < ROUNDS; i++) {
      const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      const page = await context.newPage();
      cold.push(await measure(page, () => page.goto(url)));
      warm.push(await measure(page, () => page.reload()));
      await context.close();
    }
    const p95 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.ceil(values.length * 0.95) - 1]!;
    const row = (visit: string, loads: Load[]) => {
      const usable = loads.map((l) => l.usable);
      return {
        visit,
        "usable median ms": median(usable).toFixed(0),
        "usable p95 ms": p95(usable).toFixed(0),
        "usable max ms": Math.max(...usable).toFixed(0),
        "DOMContentLoaded median ms": median(loads.map((l) => l.domContentLoaded)).toFixed(0),
        "load median ms": median(loads.map((l) => l.load)).toFixed(0),
        "KB transferred": (median(loads.map((l) => l.bytes)) / 1024).toFixed(0),
        goal: "< 1000 ms",
      };
    };
    printTable(`Playground load on the local stack, ${ROUNDS} visits each (Chromium, 1440 px)`, [
      row("first visit (empty cache)", cold),
      row("reload (warm cache)", warm),
    ]);
  } finally {
    await browser?.close();
    await stack.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
