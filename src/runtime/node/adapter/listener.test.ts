import { Writable } from 'node:stream';
import type { ServerResponse } from 'node:http';
import { setImmediate as turn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { StreamedBody } from '../../../core/http/types.js';
import { writeStream } from './listener.js';

const CHUNK = 16 * 1024;

/** A body of `count` chunks, `oneChunkQueued` as asked. */
function body(count: number, oneChunkQueued: boolean): StreamedBody {
  return {
    length: count * CHUNK,
    ...(oneChunkQueued ? { oneChunkQueued: true } : {}),
    *chunks() {
      for (let i = 0; i < count; i++) yield new Uint8Array(CHUNK);
    },
  };
}

/** A response whose connection takes a chunk only when `take` is called: the bytes the runtime holds are its writableLength. */
function heldResponse() {
  const pending: (() => void)[] = [];
  const writable = new Writable({
    highWaterMark: 64 * 1024,
    write(_chunk, _encoding, callback) {
      pending.push(callback);
    },
  });
  return { writable, take: () => pending.shift()?.() };
}

describe('a streamed body (writeStream)', () => {
  it("one marked oneChunkQueued holds a single chunk in the response's buffer while the connection takes nothing, and the next only after the last was taken", async () => {
    const { writable, take } = heldResponse();
    writeStream(writable as unknown as ServerResponse, body(20, true));
    await turn();
    expect(writable.writableLength).toBe(CHUNK);
    take();
    await turn();
    await turn();
    await turn();
    // The first chunk was taken; one more waits.
    expect(writable.writableLength).toBe(CHUNK);
    writable.destroy();
  });

  it('any other fills the buffer to its high-water mark before it waits', async () => {
    const { writable } = heldResponse();
    writeStream(writable as unknown as ServerResponse, body(20, false));
    await turn();
    expect(writable.writableLength).toBeGreaterThanOrEqual(64 * 1024);
    writable.destroy();
  });
});
