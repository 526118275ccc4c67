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
    expect(await drainStreamBody(stream, 10)).toEqual({ ok: true, size: 10, reached: [] });
  });

  it('notes when the count first reached each mark, as the chunks arrive, and none it never reached', async () => {
    // Chunks of 3, 2 and 5 bytes, each 40 ms after the last: marks 1 and 3 fall in the first
    // chunk, 5 in the second, 9 in the third, 11 never.
    const sizes = [3, 2, 5];
    const arrived: number[] = [];
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        await new Promise((resolve) => setTimeout(resolve, 40));
        const size = sizes[arrived.length];
        if (size === undefined) {
          controller.close();
          return;
        }
        arrived.push(performance.now());
        controller.enqueue(new Uint8Array(size));
      },
    }, { highWaterMark: 0 });
    const drained = await drainStreamBody(stream, 20, [1, 3, 5, 9, 11]);
    if (!drained.ok) throw new Error('not drained');
    expect(drained.size).toBe(10);
    const chunkOf = [0, 0, 1, 2];
    expect(drained.reached).toHaveLength(4);
    drained.reached.forEach((t, i) => {
      const at = arrived[chunkOf[i] ?? -1] ?? NaN;
      // Noted when its chunk arrived: after it, and before the next one.
      expect(t).toBeGreaterThanOrEqual(at);
      expect(t).toBeLessThan(arrived[(chunkOf[i] ?? 0) + 1] ?? Infinity);
    });
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
