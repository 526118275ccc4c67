// The page's speed test ends as "Done." and stays so when answers arrive after its end. The engine
// (@cloudflare/speedtest 1.14) hands each result over on a timer of its own, so a round trip
// answered together with a transfer's last bytes reached the page after onFinish; the page used to
// write "Measuring upload…" over "Done." then (its stall check already stopped), and the run never
// ended for a script or a person watching it (seen as a page test hanging in its upload on shaped
// links). The engine now takes only the idle latency (and packet loss), and the page's own load
// (web/speedtest/working-load.ts) runs the uploads with round trips beside them: on a shaped link an upload's
// answer and a round trip's come back together, and the last ones of a direction meet its end.
//
// Here a relay in front of the real server makes that meeting certain on loopback: it holds each
// upload's answer until the next round trip of the upload direction arrives, then lets them go
// together.
import { once } from 'node:events';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UPLOAD_ANSWER_GRACE_MS } from '../../src/common/speedtest/working.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

const ready = requireCommands('page in chromium', ['chromium'], 'chromium');

/**
 * Longest an upload's answer is held waiting for a round trip: the page sends one every 100 ms in
 * the light test. Longer than the page's grace for the uploads in flight at a direction's end, so
 * those held then arrive after it.
 */
const HOLD_MAX_MS = 3_000;

interface Relay {
  url: string;
  /** Awaited before the held uploads' and a round trip's answers go out. */
  beforeRelease: () => Promise<void>;
  /** Round trips that released upload answers (rather than HOLD_MAX_MS). */
  paired: () => number;
  /** Each upload answer as it went out, in order: with a round trip's answer, or alone after HOLD_MAX_MS. */
  uploads: () => ('paired' | 'alone')[];
  close: () => Promise<void>;
}

/**
 * A relay to `upstream` that forwards everything as it is, except that the answers to `POST /__up`
 * are held until the next round trip of the upload direction (`GET /__down?…during=upload…`) has
 * been answered upstream; then they all go out in the same tick, the uploads' first, so the
 * browser receives them together.
 */
async function startPairingRelay(upstream: string): Promise<Relay> {
  const target = new URL(upstream);
  // The upload answers waiting, each with its release (the page's load keeps four uploads going).
  let held: (() => void)[] = [];
  let pairings = 0;
  const uploads: ('paired' | 'alone')[] = [];
  const relay: Relay = {
    url: '',
    beforeRelease: () => Promise.resolve(),
    paired: () => pairings,
    uploads: () => uploads,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  const forward = (req: IncomingMessage, res: ServerResponse, onAnswer: (release: () => void) => void) => {
    const out = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      onAnswer(() => {
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(res);
      });
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  };
  const now = (release: () => void) => {
    release();
  };
  const server: Server = createServer((req, res) => {
    const url = req.url ?? '/';
    if (req.method === 'POST' && url.startsWith('/__up')) {
      forward(req, res, (release) => {
        const timers: ReturnType<typeof setTimeout>[] = [];
        const paired = () => {
          timers.forEach(clearTimeout);
          uploads.push('paired');
          release();
        };
        timers.push(
          setTimeout(() => {
            held = held.filter((h) => h !== paired);
            uploads.push('alone');
            release();
          }, HOLD_MAX_MS),
        );
        held.push(paired);
      });
      return;
    }
    const waiting = url.startsWith('/__down') && url.includes('during=upload') ? held : [];
    if (waiting.length === 0) {
      forward(req, res, now);
      return;
    }
    held = [];
    pairings += 1;
    forward(req, res, (release) => {
      void relay.beforeRelease().then(() => {
        for (const upload of waiting) upload();
        release();
      });
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  relay.url = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  return relay;
}

describe.skipIf(!ready)('the page when answers arrive together at the end of its upload', () => {
  let server: TestServer;
  let relay: Relay;
  let browser: Browser;

  beforeAll(async () => {
    server = await startTestServer({ NETDIAG_EVENTS_SINK: 'none', NETDIAG_RATE_LIMITS: 'speedtest=100000' });
    relay = await startPairingRelay(server.url);
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'], timeout: 20_000 });
  }, 30_000);

  afterAll(async () => {
    await browser.close();
    await relay.close();
    await server.close();
  });

  it('stays "Done." with its figures when round trips answered with the last uploads arrive at the end', async () => {
    expect(HOLD_MAX_MS).toBeGreaterThan(UPLOAD_ANSWER_GRACE_MS);
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      // The page busy when the answers arrive, as a loaded machine's often is: the browser then
      // queues the uploads' and the round trip's answers together, and the page takes them in one
      // go (without this, an idle page on loopback takes each answer as it comes).
      relay.beforeRelease = async () => {
        void page.evaluate(() => {
          const until = performance.now() + 300;
          while (performance.now() < until);
        });
        await new Promise((resolve) => setTimeout(resolve, 100));
      };
      // Every status the page shows, in order.
      await page.addInitScript(() => {
        const shown: string[] = [];
        (window as unknown as { shown: string[] }).shown = shown;
        document.addEventListener('DOMContentLoaded', () => {
          const status = document.querySelector('#speed-status');
          if (status === null) return;
          new MutationObserver(() => shown.push(status.textContent)).observe(status, { childList: true, characterData: true, subtree: true });
        });
      });
      await page.goto(`${relay.url}/`);
      await page.waitForSelector('#speed-start:not([disabled])');
      // Two light runs in the one page: each ends with uploads paired with a round trip.
      for (let run = 1; run <= 2; run++) {
        const before = relay.uploads().length;
        await page.selectOption('#speed-mode', 'light');
        await page.click('#speed-start');
        // The run is over when the page gives the Start button back (on its end, or on a failure).
        await page.waitForSelector('#speed-start:not([disabled])', { timeout: 60_000 });
        const upload = await page.getAttribute('#speed-results [data-metric="upload"]', 'data-value');
        // Time for anything late after its end: a late answer or result, had the page taken it.
        await page.waitForTimeout(1_500);
        const shown = (await page.evaluate(() => (window as unknown as { shown: string[] }).shown.splice(0))).filter((s, i, all) => s !== all[i - 1]);
        expect(await page.textContent('#speed-status'), `run ${String(run)}: the page's last statuses ${shown.slice(-3).join(' → ')}`).toBe('Done.');
        // The upload's figure is the final one, not a running figure written over it.
        expect(upload).not.toBeNull();
        expect(await page.getAttribute('#speed-results [data-metric="upload"]', 'data-value')).toBe(upload);
        // The condition was there: the run's upload answers reached the browser together with a
        // round trip's, up to its end. (Those still held when the direction stopped, and no round
        // trip is started after it, go out alone after HOLD_MAX_MS: past the page's grace for them,
        // to a browser that has given them up, a late answer of another kind.)
        const runUploads = relay.uploads().slice(before);
        expect(runUploads.filter((u) => u === 'paired').length, `run ${String(run)}: uploads answered with a round trip`).toBeGreaterThan(3);
      }
      // The relay did pair uploads with round trips (else this would test nothing).
      expect(relay.paired()).toBeGreaterThan(10);
    } finally {
      await context.close();
    }
  }, 240_000);
});
