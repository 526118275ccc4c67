import { describe, expect, it } from 'vitest';
import { ManualClock } from '../ports/clock.conformance.js';
import { counted, isRefusal, TransferLedger, type Transfer } from './transfers.js';
import type { HttpReply, RequestContext, StreamedBody } from './types.js';

const ctxOf = (sourceKey: string): RequestContext =>
  ({ req: { origin: () => 'http://api.test', header: () => undefined }, requestId: 'r', receivedAt: 0, startedAt: 0, publicUrl: undefined, params: {}, rate: undefined, caller: undefined, sourceKey }) as unknown as RequestContext;

const problemOf = (reply: Transfer | HttpReply) => {
  if (!isRefusal(reply)) throw new Error('not refused');
  const body = JSON.parse(reply.body ?? '{}') as { code: string; detail: string };
  const at = reply.headers.indexOf('Retry-After');
  const reset = reply.headers.indexOf('RateLimit-Reset');
  const retryAfter = at === -1 ? undefined : reply.headers[at + 1];
  // As on every 429: Retry-After equals RateLimit-Reset, here the bound's.
  expect(reset === -1 ? undefined : reply.headers[reset + 1]).toBe(retryAfter);
  return { status: reply.status, code: body.code, detail: body.detail, retryAfter };
};

describe('the transfers one source may hold', () => {
  it('refuses the one past the most at once with a 429 that says why, and takes another once one has ended', () => {
    const ledger = new TransferLedger({ atOnce: 3, bytesPerMinute: 1e12 }, new ManualClock());
    const open = [0, 1, 2].map(() => ledger.begin(ctxOf('a')));
    expect(open.some(isRefusal)).toBe(false);
    expect(problemOf(ledger.begin(ctxOf('a')))).toEqual({ status: 429, code: 'rate_limit_exceeded', detail: 'This source has 3 speed-test and responsiveness transfers open on this server, the most it allows at once; retry when one has ended.', retryAfter: '1' });
    // Another source is counted apart.
    expect(isRefusal(ledger.begin(ctxOf('b')))).toBe(false);
    const first = open[0] as Transfer;
    first.end();
    first.end();
    expect(isRefusal(ledger.begin(ctxOf('a')))).toBe(false);
    expect(isRefusal(ledger.begin(ctxOf('a')))).toBe(true);
  });

  it('refuses new transfers once the minute\'s bytes are spent, until the next minute', () => {
    // At the start of a minute, so the retry is the whole minute.
    const clock = new ManualClock(1_700_000_040_000);
    const ledger = new TransferLedger({ atOnce: 100, bytesPerMinute: 1_000 }, clock);
    const t = ledger.begin(ctxOf('a')) as Transfer;
    t.moved(999);
    expect(isRefusal(ledger.begin(ctxOf('a')))).toBe(false);
    t.moved(1);
    const refused = problemOf(ledger.begin(ctxOf('a')));
    expect(refused.detail).toBe('This source has moved 1000 bytes through the speed-test and responsiveness transfers in this minute, more than the 1000 it allows; retry after 60 s.');
    expect(refused.retryAfter).toBe('60');
    clock.advance(60_000);
    expect(isRefusal(ledger.begin(ctxOf('a')))).toBe(false);
  });

  it('keeps no source that holds nothing past its minute', () => {
    const clock = new ManualClock();
    const ledger = new TransferLedger({ atOnce: 2, bytesPerMinute: 1e12 }, clock);
    for (let i = 0; i < 100; i++) (ledger.begin(ctxOf(`s${String(i)}`)) as Transfer).end();
    const held = ledger.begin(ctxOf('held')) as Transfer;
    expect(ledger.sources).toBe(101);
    clock.advance(60_000);
    ledger.begin(ctxOf('new'));
    expect(ledger.sources).toBe(2);
    held.end();
  });

  it('counts a streamed body as it is taken, and ends its transfer when the runtime says the body is over', () => {
    const ledger = new TransferLedger({ atOnce: 1, bytesPerMinute: 25 }, new ManualClock());
    const transfer = ledger.begin(ctxOf('a')) as Transfer;
    let innerDone = 0;
    const body: StreamedBody = { length: 30, *chunks() { for (let i = 0; i < 3; i++) yield new Uint8Array(10); }, done: () => (innerDone += 1) };
    const wrapped = counted(body, transfer);
    const it = wrapped.chunks();
    it.next();
    it.next();
    // One open, so the next is refused for that; then the body ends (its client gone after 20 bytes).
    expect(problemOf(ledger.begin(ctxOf('a'))).detail).toMatch(/transfers open/);
    wrapped.done?.();
    expect(innerDone).toBe(1);
    expect(isRefusal(ledger.begin(ctxOf('a')))).toBe(false);
  });

  it("keeps a body's wish to be written one chunk at a time (the responsiveness download's)", () => {
    const ledger = new TransferLedger({ atOnce: 2, bytesPerMinute: 1_000 }, new ManualClock());
    const plain: StreamedBody = { length: 1, *chunks() { yield new Uint8Array(1); } };
    expect(counted({ ...plain, oneChunkQueued: true }, ledger.begin(ctxOf('a')) as Transfer).oneChunkQueued).toBe(true);
    expect(counted(plain, ledger.begin(ctxOf('b')) as Transfer).oneChunkQueued).toBeUndefined();
  });
});
