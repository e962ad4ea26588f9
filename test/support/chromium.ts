/**
 * A real browser for UI tests: Debian's chromium driven by puppeteer-core over the DevTools
 * protocol. Nothing is downloaded; `make test` installs the package when it is missing
 * (scripts/ensure-chromium.sh), and a missing browser fails the test rather than skipping it.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { REPO_ROOT } from "./processes.js";

const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
/** Git-ignored; the screenshots a browser test takes are kept here as artefacts of the run. */
const SCREENSHOT_DIR = join(REPO_ROOT, "test-results", "screenshots");

export interface RealBrowser {
  browser: Browser;
  page: Page;
  /** Saves a full-page PNG under SCREENSHOT_DIR and answers its path. */
  screenshot(name: string): Promise<string>;
  /** Messages the page logged at error level (a CSP refusal shows up here). */
  consoleErrors: string[];
  close(): Promise<void>;
}

/**
 * A first start on a busy CI machine (fresh package, font caches cold, the rest of the suite on
 * both cores) has been seen to take longer than puppeteer's default 30 s. Waiting longer is
 * liveness, not speed; a second attempt prints chromium's own output so a real failure says why.
 */
const LAUNCH_TIMEOUT_MS = 120_000;

async function launchWithRetry(profile: string): Promise<Browser> {
  const options = {
    executablePath: CHROMIUM_PATH,
    headless: true,
    timeout: LAUNCH_TIMEOUT_MS,
    // /dev/shm can be small in containers; chromium then stalls instead of failing.
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-dev-shm-usage",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      `--user-data-dir=${profile}`,
    ],
    defaultViewport: { width: 1280, height: 900 },
  };
  try {
    return await puppeteer.launch(options);
  } catch (first) {
    process.stderr.write(`chromium did not start (${String(first)}); trying once more with its output shown\n`);
    return await puppeteer.launch({ ...options, dumpio: true });
  }
}

export async function launchChromium(): Promise<RealBrowser> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`no chromium at ${CHROMIUM_PATH}: run scripts/ensure-chromium.sh (make test does)`);
  const profile = mkdtempSync(join(tmpdir(), "3ngram-chromium-"));
  const browser = await launchWithRetry(profile);
  const page = await browser.newPage();
  const consoleErrors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") consoleErrors.push(message.text());
  });
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return {
    browser,
    page,
    consoleErrors,
    async screenshot(name) {
      const path = join(SCREENSHOT_DIR, `${name}.png`);
      await page.screenshot({ path, fullPage: true });
      return path;
    },
    async close() {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
