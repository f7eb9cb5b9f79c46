// The console's code runs in Chromium, where neither vitest nor NODE_V8_COVERAGE sees it: while coverage runs (the
// coverage provider sets NODE_V8_COVERAGE in vitest's forks, scripts/coverage-provider.mjs), each page of a browser
// the tests launch records which of the console's bundle ran, and hands it to the same folder as the threads' and
// child processes' coverage when the page, its context or the browser closes.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';

/** The console's bundle as scripts/build-console.mjs names it (MapLibre's files are not the console's). */
const CONSOLE_BUNDLE = /\/console\/assets\/console-[0-9a-f]+\.js$/;

let written = 0;

/** `browser`, its new pages recording JavaScript coverage while coverage runs; unchanged otherwise. */
export function measuredBrowser(browser: Browser): Browser {
  const dir = process.env.NODE_V8_COVERAGE;
  if (!dir) return browser;
  const open = new Set<Page>();

  const take = async (page: Page): Promise<void> => {
    if (!open.delete(page)) return;
    const entries = (await page.coverage.stopJSCoverage()).filter((e) => CONSOLE_BUNDLE.test(new URL(e.url).pathname));
    if (entries.length === 0) return;
    mkdirSync(dir, { recursive: true });
    const result = entries.map(({ url, source, functions }) => ({ url, source, functions }));
    writeFileSync(join(dir, `browser-${process.pid}-${++written}.json`), JSON.stringify({ result }));
  };

  const measuredContext = (context: BrowserContext): BrowserContext => {
    const newPage = context.newPage.bind(context);
    context.newPage = async () => {
      const page = await newPage();
      await page.coverage.startJSCoverage({ resetOnNavigation: false });
      open.add(page);
      const close = page.close.bind(page);
      page.close = async (options) => {
        await take(page);
        return close(options);
      };
      return page;
    };
    const closeContext = context.close.bind(context);
    context.close = async (options) => {
      await Promise.all(context.pages().map(take));
      return closeContext(options);
    };
    return context;
  };

  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => measuredContext(await newContext(options));
  const closeBrowser = browser.close.bind(browser);
  browser.close = async (options) => {
    await Promise.all([...open].map(take));
    return closeBrowser(options);
  };
  return browser;
}
