// Opens serve --http's dashboard in Debian's Chromium (driven by playwright-core) as a person
// would: types the token into the page's form, then reports what the page shows, one JSON line
// per step on stdout. After the first line it waits for a line on stdin naming the hits the page
// should come to show (the test makes more calls meanwhile), then reports again and saves
// screenshots (a laptop's width and a phone's).
// Usage: node dashboard-browser.mjs URL TOKEN SCREENSHOT_PREFIX CHROMIUM
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

const [url, token, screenshots, chromiumPath] = process.argv.slice(2);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const profile = mkdtempSync(join(tmpdir(), "execache-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: chromiumPath,
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  viewport: { width: 1280, height: 900 },
});
const errors = [];
const requests = [];
try {
  const page = context.pages()[0] ?? await context.newPage();
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(String(error)));
  page.on("request", (request) => requests.push(request.url()));

  await page.goto(url);
  const asked = await page.locator("#token-form").isVisible();
  await page.fill("#token", token);
  await page.click("#token-form button[type=submit]");
  await page.waitForFunction(() => !document.getElementById("figures").hidden
    && document.getElementById("total-hits").textContent !== "–");
  const first = await figures(page);
  report({ step: "first", asked, ...first });

  const next = await lines.next();
  const expectedHits = next.value.trim();
  await page.waitForFunction((hits) => document.getElementById("total-hits").textContent === hits, expectedHits,
    { timeout: 30000 });
  const second = await figures(page);
  await page.screenshot({ path: screenshots + "-laptop.png", fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(300);
  const phoneOverflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  await page.screenshot({ path: screenshots + "-phone.png", fullPage: true });
  const kept = await page.evaluate(() => sessionStorage.getItem("execache.token"));
  report({
    step: "second", ...second, phoneOverflow, tokenKept: kept === token,
    tokenInAUrl: requests.some((address) => address.includes(token)), errors,
  });
} catch (e) {
  report({ step: "failed", thrown: String(e && e.stack || e), errors });
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}

async function figures(page) {
  return page.evaluate(() => {
    const text = (id) => document.getElementById(id).textContent.trim();
    const rows = (id) => [...document.querySelectorAll("#" + id + " tbody tr")]
      .map((row) => [...row.cells].map((cell) => cell.textContent.trim()));
    const drawn = (id) => document.getElementById(id).querySelectorAll("rect, path, circle").length;
    return {
      hits: text("total-hits"), misses: text("total-misses"), shared: text("total-shared"), failed: text("total-failed"),
      hitRate: text("hit-rate"), saved: text("saved"), entries: text("entries"), state: text("state"),
      tools: rows("tools"), agents: rows("agents"), agentsEmptyShown: !document.getElementById("agents-empty").hidden,
      health: text("health-state"), keptOut: text("kept-out-tokens"),
      drawn: { hitRate: drawn("chart-hit-rate"), calls: drawn("chart-calls"), saved: drawn("chart-saved") },
    };
  });
}

function report(value) {
  process.stdout.write(JSON.stringify(value) + "\n");
}
