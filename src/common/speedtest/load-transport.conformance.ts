// The speed-test load transport's conformance suite (load-transport.ts): a download counts the
// bytes the server sent, an upload's marks are read, a round trip is timed less the server's own
// time, an abort ends a transfer the server holds open, a 429 is LoadRefused with its Retry-After,
// and a malformed Server-Timing is read as no marks, never thrown on. Run by the command line's
// node:http transport in Node and by the page's fetch transport in Chromium
// (test/speedtest/load-transport-node.test.ts, test/speedtest/load-transport-chromium.test.ts).
import { describe, expect, it } from 'vitest';
import { LoadRefused, type LoadTransport } from './load-transport.js';

/** What the suite meets: real netdiag servers and the fake peer of the test tree (test/support/fake-load-peer.ts). */
export interface ConformancePeers {
  /** A real server under its default limits. */
  open: string;
  /** A real server whose speed-test limit allows one request a window. */
  limited: string;
  /** The FAKE peer: malformed Server-Timing, round trips held HELD_ROUND_TRIP_MS, transfers held open on demand. */
  fake: { url: string; heldRoundTripMs: number; holdTransfers: (on: boolean) => void; uploads: readonly number[] };
}

/** A transport made against one origin, and what closes it. */
interface TransportUnderTest {
  transport: LoadTransport;
  close(): Promise<void>;
}

/** An exchange whose signal was aborted settles well inside this; one that does not is hung. */
const SETTLED_MS = 5_000;

/** Resolves when `work` settles, however it does. */
const settled = (work: Promise<unknown>): Promise<void> => work.then(() => undefined, () => undefined);

/** Runs `check` on a transport made against `base`, closing it after. */
async function withTransport(make: (base: string) => Promise<TransportUnderTest>, base: string, check: (t: LoadTransport) => Promise<void>): Promise<void> {
  const made = await make(base);
  try {
    await check(made.transport);
  } finally {
    await made.close();
  }
}

export function loadTransportConformance(name: string, peers: () => ConformancePeers, make: (base: string) => Promise<TransportUnderTest>): void {
  describe(`${name} load transport conformance`, () => {
    it('a download counts every byte the server sent', async () => {
      await withTransport(make, peers().open, async (transport) => {
        let counted = 0;
        await transport.download(3_000_000, (bytes) => (counted += bytes), new AbortController().signal);
        expect(counted).toBe(3_000_000);
      });
    });

    it('an upload arrives whole and its marks are read: the body\'s time and its quarters, in order', async () => {
      await withTransport(make, peers().open, async (transport) => {
        transport.prepareUploads(2_000_000);
        const before = performance.now();
        const marks = await transport.upload(2_000_000, new AbortController().signal);
        const took = performance.now() - before;
        expect(marks).toBeDefined();
        const [q25 = NaN, q50 = NaN, q75 = NaN] = marks?.quarters ?? [];
        expect(marks?.quarters).toHaveLength(3);
        expect(0 <= q25 && q25 <= q50 && q50 <= q75 && q75 <= (marks?.ms ?? NaN)).toBe(true);
        expect(marks?.ms).toBeLessThanOrEqual(took);
      });
      await withTransport(make, peers().fake.url, async (transport) => {
        transport.prepareUploads(300_000);
        await transport.upload(300_000, new AbortController().signal);
        expect(peers().fake.uploads.at(-1)).toBe(300_000);
      });
    });

    it('a round trip is timed from its sending, less the time the server says it took', async () => {
      const { url, heldRoundTripMs } = peers().fake;
      await withTransport(make, url, async (transport) => {
        const before = performance.now();
        // Marked idle, the fake holds the answer and does not say so: it is all round trip.
        const unsaid = await transport.roundTrip('idle', 0, new AbortController().signal);
        const after = performance.now();
        expect(unsaid.sentAt).toBeGreaterThanOrEqual(before);
        expect(unsaid.sentAt).toBeLessThanOrEqual(after);
        expect(unsaid.ms).toBeGreaterThanOrEqual(heldRoundTripMs - 1);
        expect(unsaid.ms).toBeLessThanOrEqual(after - before);
        // Marked as under load, it says the hold was its own time, which the round trip leaves out.
        const said = await transport.roundTrip('download', 1, new AbortController().signal);
        expect(said.ms).toBeGreaterThanOrEqual(0);
        expect(said.ms).toBeLessThan(unsaid.ms - heldRoundTripMs / 2);
      });
    });

    it('an abort ends a download and an upload the server holds open, and no byte is counted after it', async () => {
      const fake = peers().fake;
      fake.holdTransfers(true);
      try {
        await withTransport(make, fake.url, async (transport) => {
          const stop = new AbortController();
          let afterAbort = 0;
          const download = transport.download(50_000_000, (bytes) => {
            if (stop.signal.aborted) afterAbort += bytes;
            stop.abort();
          }, stop.signal);
          await expect(Promise.race([settled(download).then(() => 'settled'), new Promise((r) => setTimeout(r, SETTLED_MS, 'hung'))])).resolves.toBe('settled');
          expect(afterAbort).toBe(0);
          transport.prepareUploads(200_000);
          const stopUpload = new AbortController();
          const upload = transport.upload(200_000, stopUpload.signal);
          setTimeout(() => {
            stopUpload.abort();
          }, 300);
          await expect(Promise.race([settled(upload).then(() => 'settled'), new Promise((r) => setTimeout(r, SETTLED_MS, 'hung'))])).resolves.toBe('settled');
        });
      } finally {
        fake.holdTransfers(false);
      }
    }, 20_000);

    it('a 429 is LoadRefused with the Retry-After the server asked for', async () => {
      await withTransport(make, peers().limited, async (transport) => {
        await transport.roundTrip('idle', 0, new AbortController().signal);
        const refused = await transport.download(1_000, () => undefined, new AbortController().signal).then(() => undefined, (err: unknown) => err);
        expect(refused).toBeInstanceOf(LoadRefused);
        const seconds = (refused as LoadRefused).retryAfterS;
        expect(seconds).toBeGreaterThan(0);
        expect(Number.isInteger(seconds)).toBe(true);
      });
    });

    it('a malformed Server-Timing is read as no marks and no server time, never thrown on', async () => {
      await withTransport(make, peers().fake.url, async (transport) => {
        transport.prepareUploads(100_000);
        await expect(transport.upload(100_000, new AbortController().signal)).resolves.toBeUndefined();
        let counted = 0;
        await transport.download(500_000, (bytes) => (counted += bytes), new AbortController().signal);
        expect(counted).toBe(500_000);
        const trip = await transport.roundTrip('idle', 2, new AbortController().signal);
        expect(Number.isFinite(trip.ms)).toBe(true);
      });
    });
  });
}
