import { type Browser, chromium } from "playwright-core";

/** Debian's Chromium (apt-get install chromium), or CHROMIUM_PATH. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * The installed Chromium, never a browser Playwright downloads: this machine and CI reach no
 * download host. The flags keep it from reaching for the network itself.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-background-networking",
      "--disable-gpu",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
}
