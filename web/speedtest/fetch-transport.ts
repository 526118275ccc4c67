// The page's exchanges for the speed test's load (src/common/speedtest/load-transport.ts), over
// fetch against this server's /__down and /__up: bytes counted from the body's reader as they
// arrive, a round trip timed by Resource Timing as the speed-test library times its own.
import { LoadRefused, type LoadDirection, type LoadTransport, type RoundTripMark, type TimedRoundTrip } from '../../src/common/speedtest/load-transport.js';
import { bodyTiming, serverProcessingMs, type BodyTiming } from '../../src/common/speedtest/server-timing.js';
import { retryAfterSeconds } from '../../src/common/rate-limit.js';
import { problemText, type ProblemDoc } from '../ui/dom.js';
import type { Multiplexing } from './speed-result.js';

/** Why a direction failed, in the page's failure reasons (a problem answered, or the network). */
export class LoadError extends Error {
  constructor(
    message: string,
    readonly reason: 'engine_error' | 'network_error',
  ) {
    super(message);
  }
}

/** Throws the answer's problem when it is one (a 4xx or 5xx with its problem document; a 429 as LoadRefused). */
async function checked(res: Response): Promise<Response> {
  if (res.ok) return res;
  let problem: ProblemDoc = { status: res.status, title: res.statusText };
  try {
    problem = { ...problem, ...((await res.json()) as ProblemDoc) };
  } catch {
    // No problem document: the status alone says it.
  }
  const message = `${String(res.status)}: ${problemText(problem)}`;
  throw res.status === 429 ? new LoadRefused(message, retryAfterSeconds(res.headers.get('Retry-After'))) : new LoadError(message, 'engine_error');
}

/** A failed exchange in the page's words: a problem answered as it was, an abort as it was, anything else the network's. */
function inPageWords(err: unknown): Error {
  if (err instanceof LoadError || err instanceof LoadRefused) return err;
  if (err instanceof DOMException && err.name === 'AbortError') return err;
  return new LoadError(err instanceof Error ? err.message : String(err), 'network_error');
}

/**
 * A round trip's time from Resource Timing: request sent to first byte of the answer, less the
 * server's own time; undefined when the browser has no entry for it (or no timing in it). Its entry
 * is the one of `url` that started at `sentAt` or later: the buffer is not cleared, and an earlier
 * round trip of the same URL (an earlier test's, or "Nearest"'s) may still be in it.
 */
function timedByBrowser(url: string, sentAt: number, serverMs: number): number | undefined {
  const entry = (performance.getEntriesByName(url, 'resource') as PerformanceResourceTiming[]).find((e) => e.startTime >= sentAt);
  if (entry === undefined || entry.requestStart <= 0 || entry.responseStart < entry.requestStart) return undefined;
  return Math.max(0, entry.responseStart - entry.requestStart - serverMs);
}

/** The entry is queued as the answer ends: when it is not there yet, one turn of the event loop brings it. */
const nextTurn = (): Promise<void> =>
  new Promise((resolve) => {
    setTimeout(resolve, 0);
  });

/** The page's transport; `base` is the origin measured: the page's own, or a server the operator lists (cross-origin, CORS and Timing-Allow-Origin on its targets). */
export class FetchLoadTransport implements LoadTransport {
  /** One body of zeros for every upload, sliced (a Blob slice shares its bytes). */
  #zeros = new Blob([]);

  constructor(private readonly base: string = location.href) {}

  async download(bytes: number, onBytes: (bytes: number) => void, signal: AbortSignal): Promise<void> {
    try {
      const res = await checked(await fetch(new URL(`/__down?bytes=${String(bytes)}`, this.base), { cache: 'no-store', signal }));
      const reader = res.body?.getReader();
      if (reader === undefined) return;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        onBytes(value.byteLength);
      }
    } catch (err: unknown) {
      throw inPageWords(err);
    }
  }

  prepareUploads(bytes: number): void {
    if (this.#zeros.size !== bytes) this.#zeros = new Blob([new Uint8Array(bytes)]);
  }

  async upload(bytes: number, signal: AbortSignal): Promise<BodyTiming | undefined> {
    try {
      const res = await checked(await fetch(new URL('/__up', this.base), { method: 'POST', body: this.#zeros.slice(0, bytes), cache: 'no-store', signal }));
      await res.arrayBuffer();
      return bodyTiming(res.headers.get('Server-Timing'));
    } catch (err: unknown) {
      throw inPageWords(err);
    }
  }

  /** An empty download, timed by Resource Timing (by the clock around the fetch only when the browser has no entry for it); `n` keeps each one's entry apart. */
  async roundTrip(mark: RoundTripMark, n: number, signal: AbortSignal): Promise<TimedRoundTrip> {
    const url = new URL(`/__down?bytes=0&during=${mark}&n=${String(n)}`, this.base).href;
    try {
      const sentAt = performance.now();
      const res = await checked(await fetch(url, { cache: 'no-store', signal }));
      await res.arrayBuffer();
      const clock = performance.now() - sentAt;
      const serverMs = serverProcessingMs(res.headers.get('Server-Timing')) ?? 0;
      const browser = timedByBrowser(url, sentAt, serverMs) ?? (await nextTurn().then(() => timedByBrowser(url, sentAt, serverMs)));
      return { sentAt, ms: browser ?? clock };
    } catch (err: unknown) {
      throw inPageWords(err);
    }
  }
}

/**
 * Room in the page's Resource Timing buffer for a whole test's entries, set once as the page
 * starts (web/main.ts; the speed-test library asks the same size as it starts). The page never
 * clears the buffer: each reader takes its own entries by name (timedByBrowser here,
 * web/latency/regions.ts), and the speed-test library, which clears it as it starts and between
 * its steps, is done before the page's own round trips and load begin.
 */
export const RESOURCE_TIMING_ROOM = 10_000;

/**
 * HTTP/2 or HTTP/3 when every request of a direction's load since `since` went over it, as
 * Resource Timing's nextHopProtocol (the ALPN id) says: the browser then carries all of them on
 * one connection to the origin, the streams being HTTP streams, not connections. Undefined over
 * HTTP/1.1, or when the browser has no entry to say.
 */
export function multiplexingOf(base: string, direction: LoadDirection, since: number): Multiplexing | undefined {
  const target = new URL(direction === 'download' ? '/__down' : '/__up', base).href;
  const entries = (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).filter((e) => e.startTime >= since && (e.name === target || e.name.startsWith(`${target}?`)));
  const protocols = new Set(entries.map((e) => e.nextHopProtocol));
  const [only] = protocols;
  return protocols.size === 1 && (only === 'h2' || only === 'h3') ? only : undefined;
}
