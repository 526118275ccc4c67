import { describe, expect, it } from 'vitest';
import { drainStreamBody, readAtMost } from './bounded-read.js';

/** A stream of `chunks` that records whether it was cancelled and how many chunks were pulled. */
function source(chunks: number[]) {
  const seen = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const size = chunks[seen.pulled++];
      if (size === undefined) controller.close();
      else controller.enqueue(new Uint8Array(size).fill(seen.pulled));
    },
    cancel() {
      seen.cancelled = true;
    },
  }, { highWaterMark: 0 });
  return { stream, seen };
}

describe('readAtMost', () => {
  it('joins the chunks of a stream within the bound, exactly at it included', async () => {
    const { stream } = source([3, 2, 5]);
    const bytes = await readAtMost(stream, 10);
    expect(Array.from(bytes ?? [])).toEqual([1, 1, 1, 2, 2, 3, 3, 3, 3, 3]);
  });

  it('stops at the chunk that passes the bound and pulls no further', async () => {
    const { stream, seen } = source([4, 4, 4, 4]);
    expect(await readAtMost(stream, 10)).toBeUndefined();
    expect(seen.pulled).toBe(3);
    expect(seen.cancelled).toBe(false);
  });

  it('cancels the stream past the bound when asked (a response body to free)', async () => {
    const { stream, seen } = source([8, 8]);
    expect(await readAtMost(stream, 10, true)).toBeUndefined();
    expect(seen.cancelled).toBe(true);
  });
});

describe('drainStreamBody', () => {
  it('counts a stream to its end within the bound', async () => {
    const { stream } = source([3, 2, 5]);
    expect(await drainStreamBody(stream, 10)).toEqual({ ok: true, size: 10 });
  });

  it('stops at the chunk that passes the bound, pulls no further and does not cancel', async () => {
    const { stream, seen } = source([4, 4, 4, 4]);
    expect(await drainStreamBody(stream, 10)).toEqual({ ok: false, reason: 'too_large' });
    expect(seen.pulled).toBe(3);
    expect(seen.cancelled).toBe(false);
  });

  it('a stream that errors (the client went away) is cut_off', async () => {
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(3));
        controller.error(new Error('aborted'));
      },
    });
    expect(await drainStreamBody(stream, 10)).toEqual({ ok: false, reason: 'cut_off' });
  });
});
