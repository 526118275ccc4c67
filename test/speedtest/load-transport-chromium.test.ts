// The page's fetch transport (web/speedtest/fetch-transport.ts) held to the load transport's
// conformance suite in Debian's chromium: the transport is bundled into a page on the peer's own
// origin, and each call the suite makes runs there (test/support/load-transport-page.ts).
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe } from 'vitest';
import { loadTransportConformance, type ConformancePeers } from '../../src/common/speedtest/load-transport.conformance.js';
import { LoadRefused, type LoadTransport, type RoundTripMark } from '../../src/common/speedtest/load-transport.js';
import type { BodyTiming } from '../../src/common/speedtest/server-timing.js';
import { HELD_ROUND_TRIP_MS, startFakeLoadPeer, type FakeLoadPeer } from '../support/fake-load-peer.js';
import type { PageAnswer, PageTransport } from '../support/load-transport-page.js';
import { LOOPBACK_TRANSFERS, startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

const ready = requireCommands('fetch transport in chromium', ['chromium'], 'chromium');

let open: TestServer;
let limited: TestServer;
let fake: FakeLoadPeer;
let browser: Browser;
let bundle: string;

/** What the bundled page holds (test/support/load-transport-page.ts). */
type InPage = { loadTransport: PageTransport };

/** What the page's call settled with, back in the suite's terms: its value, or the error it threw. */
function settledAs(answer: PageAnswer): PageAnswer & { ok: true } {
  if (answer.ok) return answer;
  throw answer.refused ? new LoadRefused(answer.message, answer.retryAfterS) : new Error(answer.message);
}

/** A LoadTransport in the suite whose every call runs in `page`; chunks come as the page counts them. */
function transportIn(page: Page, onChunk: Map<number, { seen: number; onBytes: (bytes: number) => void }>): LoadTransport {
  let nextId = 0;
  const call = async (signal: AbortSignal, run: (id: number) => Promise<PageAnswer>): Promise<PageAnswer & { ok: true }> => {
    const id = nextId++;
    const abort = () => {
      page.evaluate((i) => {
        (globalThis as unknown as InPage).loadTransport.abort(i);
      }, id).catch(() => undefined);
    };
    signal.addEventListener('abort', abort, { once: true });
    try {
      return settledAs(await run(id));
    } finally {
      signal.removeEventListener('abort', abort);
    }
  };
  return {
    download: async (bytes, onBytes, signal) => {
      await call(signal, async (id) => {
        const live = { seen: 0, onBytes };
        onChunk.set(id, live);
        const answer = await page.evaluate(([i, b]) => (globalThis as unknown as InPage).loadTransport.download(i, b), [id, bytes] as const).finally(() => onChunk.delete(id));
        // The chunks the exposed function had not brought yet come from the answer; any it brings later are not counted twice.
        if (answer.ok) for (const n of (answer.chunks ?? []).slice(live.seen)) onBytes(n);
        return answer;
      });
    },
    prepareUploads: (bytes) => {
      void page.evaluate((b) => {
        (globalThis as unknown as InPage).loadTransport.prepareUploads(b);
      }, bytes);
    },
    upload: async (bytes, signal) => (await call(signal, (id) => page.evaluate(([i, b]) => (globalThis as unknown as InPage).loadTransport.upload(i, b), [id, bytes] as const))).value as BodyTiming | undefined,
    roundTrip: async (mark: RoundTripMark, n, signal) => {
      const started = performance.now();
      const answer = await call(signal, (id) => page.evaluate(([i, m, k]) => (globalThis as unknown as InPage).loadTransport.roundTrip(i, m, k), [id, mark, n] as const));
      return { sentAt: started + (answer.sentAfterMs ?? 0), ms: answer.value as number };
    },
  };
}

describe.skipIf(!ready)('the page\'s fetch transport in Chromium', () => {
  beforeAll(async () => {
    open = await startTestServer({ ...LOOPBACK_TRANSFERS, NETDIAG_EVENTS_SINK: 'none' });
    limited = await startTestServer({ ...LOOPBACK_TRANSFERS, NETDIAG_EVENTS_SINK: 'none', NETDIAG_RATE_LIMITS: 'speedtest=1' });
    fake = await startFakeLoadPeer();
    const built = await build({ entryPoints: [fileURLToPath(new URL('../support/load-transport-page.ts', import.meta.url))], bundle: true, format: 'iife', write: false, target: 'es2022' });
    bundle = built.outputFiles[0]?.text ?? '';
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'], timeout: 20_000 });
  }, 30_000);

  afterAll(async () => {
    await browser.close();
    await Promise.all([open.close(), limited.close(), fake.close()]);
  });

  const peers = (): ConformancePeers => ({ open: open.url, limited: limited.url, fake: { url: fake.url, heldRoundTripMs: HELD_ROUND_TRIP_MS, holdTransfers: fake.holdTransfers, uploads: fake.uploads } });

  loadTransportConformance('fetch in Chromium', peers, async (base) => {
    // The page's own policy would refuse an injected script; the transport is what is under test.
    const context = await browser.newContext({ bypassCSP: true });
    const page = await context.newPage();
    const chunks = new Map<number, { seen: number; onBytes: (bytes: number) => void }>();
    await page.exposeFunction('loadTransportBytes', (id: number, bytes: number) => {
      const live = chunks.get(id);
      if (live === undefined) return;
      live.seen++;
      live.onBytes(bytes);
    });
    // A small answer of the peer's origin to run on, not the netdiag page with its own script.
    await page.goto(`${base}/v1/health`);
    await page.addScriptTag({ content: bundle });
    return { transport: transportIn(page, chunks), close: () => context.close() };
  });
});
