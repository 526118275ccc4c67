// The page's stream choice in Debian's chromium against the real server: "Single" loads each
// direction with one stream, "Multi" (the default) with STREAMS. What counts is what the server
// sees: every load request (a download of bytes, an upload) is recorded as the server's own
// HTTP listener receives it and answers it, and the most in flight at once is the streams the
// page really ran. The result names the count ("1 stream"), and the export carries it.
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAMS } from '../../src/common/speedtest/working.js';
import { LOOPBACK_TRANSFERS, startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';
import { openWatched } from '../support/watched-page.js';

const ready = requireCommands('page in chromium', ['chromium'], 'chromium');

type LoadKind = 'download' | 'upload';

/** A load request as the server received it: which direction, and when it came and was answered (ms). */
interface Seen {
  kind: LoadKind;
  /** The connection it came on. */
  socket: object;
  start: number;
  end: number;
}

/** The direction a request loads, or undefined for anything else (a round trip is a download of 0 bytes). */
function loadKind(req: IncomingMessage): LoadKind | undefined {
  const url = new URL(req.url ?? '/', 'http://server');
  if (req.method === 'POST' && url.pathname === '/__up') return 'upload';
  if (req.method === 'GET' && url.pathname === '/__down' && Number(url.searchParams.get('bytes')) > 0) return 'download';
  return undefined;
}

/** The most requests of `kind` the server had in flight at any moment. */
function mostInFlight(seen: readonly Seen[], kind: LoadKind): number {
  const edges = seen.filter((s) => s.kind === kind).flatMap((s) => [{ at: s.start, d: 1 }, { at: s.end, d: -1 }]);
  // An answer that ended as another came in at the same moment is not counted as overlapping.
  edges.sort((a, b) => a.at - b.at || a.d - b.d);
  let now = 0;
  let most = 0;
  for (const e of edges) {
    now += e.d;
    most = Math.max(most, now);
  }
  return most;
}

describe.skipIf(!ready)('the stream choice, in Chromium', () => {
  let server: TestServer;
  let browser: Browser;
  const seen: Seen[] = [];

  beforeAll(async () => {
    server = await startTestServer({ ...LOOPBACK_TRANSFERS, NETDIAG_EVENTS_SINK: 'none' });
    server.running.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const kind = loadKind(req);
      if (kind === undefined) return;
      const entry: Seen = { kind, socket: req.socket, start: performance.now(), end: Infinity };
      // Over HTTP/1.1 (the browser's only choice over plain http) a connection carries one exchange
      // at a time: the one before on this connection was over once this one came, whenever Node
      // got round to saying it was answered (a 250 MB answer was read in full 2 ms before its 'finish').
      const before = seen.findLast((s) => s.socket === req.socket);
      if (before !== undefined) before.end = Math.min(before.end, entry.start);
      seen.push(entry);
      // Answered ('finish'), or cut short ('close' without a finish).
      const ended = () => {
        entry.end = Math.min(entry.end, performance.now());
      };
      res.on('finish', ended);
      res.on('close', ended);
    });
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'], timeout: 20_000 });
  }, 30_000);

  afterAll(async () => {
    await browser.close();
    await server.close();
  });

  /** Runs the light test with the given stream choice; the page once it is over. */
  async function run(page: Page, streams: 'single' | 'multi'): Promise<void> {
    await page.waitForSelector('#speed-start:not([disabled])');
    await page.selectOption('#speed-mode', 'light');
    await page.selectOption('#speed-streams', streams);
    await page.click('#speed-start');
    await page.waitForSelector('#speed-start:not([disabled])', { timeout: 60_000 });
    expect(await page.textContent('#speed-status'), (await page.textContent('#speed-error')) ?? '').toBe('Done.');
  }

  it('offers multi by default, and single loads each direction over one stream at the server, named "1 stream"', async () => {
    const { page, context, refused } = await openWatched(browser, `${server.url}/?lang=en`);
    try {
      await page.waitForSelector('#speed-streams option', { state: 'attached' });
      expect(await page.$$eval('#speed-streams option', (options) => options.map((o): [string, string] => [(o as HTMLOptionElement).value, o.textContent]))).toEqual([
        ['multi', `Multi (${String(STREAMS)} streams)`],
        ['single', 'Single (1 stream)'],
      ]);
      expect(await page.inputValue('#speed-streams')).toBe('multi');

      seen.length = 0;
      await run(page, 'single');
      expect(seen.filter((s) => s.kind === 'download').length).toBeGreaterThan(1);
      expect(seen.filter((s) => s.kind === 'upload').length).toBeGreaterThan(1);
      expect(mostInFlight(seen, 'download'), 'downloads in flight at once').toBe(1);
      expect(mostInFlight(seen, 'upload'), 'uploads in flight at once').toBe(1);
      for (const name of ['download', 'upload']) {
        expect(await page.textContent(`#speed-results [data-metric="${name}"] .detail`)).toMatch(/^(burst: .+; sustained: )?1 stream(, steady for |; the rate did not settle)/);
      }
      const [json] = await Promise.all([page.waitForEvent('download'), page.click('#speed-export-json')]);
      const exported = JSON.parse(readFileSync(await json.path(), 'utf8')) as { measured: Record<LoadKind, { streams: number }> };
      expect([exported.measured.download.streams, exported.measured.upload.streams]).toEqual([1, 1]);

      // The default, on the same page: STREAMS at once, so the count above is the choice's.
      seen.length = 0;
      await run(page, 'multi');
      expect(mostInFlight(seen, 'download')).toBe(STREAMS);
      expect(mostInFlight(seen, 'upload')).toBe(STREAMS);
      expect(await page.textContent('#speed-results [data-metric="download"] .detail')).toContain(`${String(STREAMS)} streams`);
      expect(await refused()).toEqual([]);
    } finally {
      await context.close();
    }
  }, 150_000);
});
