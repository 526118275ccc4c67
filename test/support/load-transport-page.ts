// Bundled into a page by test/speedtest/load-transport-chromium.test.ts: the page's fetch
// transport on the page's origin, each call driven from the suite by page.evaluate. A call's
// chunks go to the suite as they arrive (the exposed `loadTransportBytes`) and again in its answer,
// so none is lost; its time of sending is told from the call's own start, as the page's clock is not the suite's.
import { FetchLoadTransport } from '../../web/speedtest/fetch-transport.js';
import { LoadRefused, type RoundTripMark } from '../../src/common/speedtest/load-transport.js';

/** How a call settled, as it crosses into the suite. */
export type PageAnswer = { ok: true; value?: unknown; chunks?: number[]; sentAfterMs?: number } | { ok: false; refused: boolean; retryAfterS?: number; message: string };

/** The calls the suite makes. */
export interface PageTransport {
  download(id: number, bytes: number): Promise<PageAnswer>;
  prepareUploads(bytes: number): void;
  upload(id: number, bytes: number): Promise<PageAnswer>;
  roundTrip(id: number, mark: RoundTripMark, n: number): Promise<PageAnswer>;
  abort(id: number): void;
}

const transport = new FetchLoadTransport(location.origin);
const controllers = new Map<number, AbortController>();
const told = (globalThis as unknown as { loadTransportBytes?: (id: number, bytes: number) => void }).loadTransportBytes;

async function answered(id: number, call: (signal: AbortSignal) => Promise<Omit<PageAnswer & { ok: true }, 'ok'>>): Promise<PageAnswer> {
  const controller = new AbortController();
  controllers.set(id, controller);
  try {
    return { ok: true, ...(await call(controller.signal)) };
  } catch (err: unknown) {
    return err instanceof LoadRefused ? { ok: false, refused: true, retryAfterS: err.retryAfterS, message: err.message } : { ok: false, refused: false, message: err instanceof Error ? err.message : String(err) };
  } finally {
    controllers.delete(id);
  }
}

const page: PageTransport = {
  download: (id, bytes) =>
    answered(id, async (signal) => {
      const chunks: number[] = [];
      await transport.download(bytes, (n) => {
        chunks.push(n);
        told?.(id, n);
      }, signal);
      return { chunks };
    }),
  prepareUploads: (bytes) => {
    transport.prepareUploads(bytes);
  },
  upload: (id, bytes) => answered(id, async (signal) => ({ value: await transport.upload(bytes, signal) })),
  roundTrip: (id, mark, n) =>
    answered(id, async (signal) => {
      const started = performance.now();
      const trip = await transport.roundTrip(mark, n, signal);
      return { value: trip.ms, sentAfterMs: trip.sentAt - started };
    }),
  abort: (id) => controllers.get(id)?.abort(),
};
(globalThis as unknown as { loadTransport: PageTransport }).loadTransport = page;
