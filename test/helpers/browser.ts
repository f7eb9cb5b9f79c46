import { chromium, type Browser } from 'playwright-core';
import { needsSystem } from './system.js';
import { measuredBrowser } from '../setup/browser-coverage.js';

/** Debian's Chromium: browser tests drive it, never a downloaded browser. */
const CHROMIUM = '/usr/bin/chromium';

/** Whether the browser tests can run (see needsSystem: a skip line on a dev machine, a failure under CI). */
export const chromiumAvailable = (what: string): boolean => needsSystem('chromium', CHROMIUM, what);

/** Headless Chromium without the network chatter a test machine has no use for. */
export async function launchChromium(): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return measuredBrowser(browser); // records the console's coverage while coverage runs
}
