import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readNodeBody } from './read-body.js';

/** The listeners a settled read must have taken away again. */
const listeners = (s: PassThrough) => ['data', 'end', 'error', 'close'].map((e) => s.listenerCount(e));

describe('readNodeBody', () => {
  it('joins a body that arrives in several chunks, in order, up to the bound exactly', async () => {
    const s = new PassThrough();
    const read = readNodeBody(s, 10);
    s.write(Buffer.from('abc'));
    s.write(Buffer.from('defg'));
    setImmediate(() => s.end(Buffer.from('hij')));
    const body = await read;
    expect(body.ok && Buffer.from(body.bytes).toString()).toBe('abcdefghij');
    expect(listeners(s)).toEqual([0, 0, 0, 0]);
  });

  it('stops at the first chunk past the bound: too_large, paused, nothing more read', async () => {
    const s = new PassThrough();
    const read = readNodeBody(s, 5);
    s.write(Buffer.from('abcd'));
    s.write(Buffer.from('efgh'));
    expect(await read).toEqual({ ok: false, reason: 'too_large' });
    expect(s.isPaused()).toBe(true);
    expect(listeners(s)).toEqual([0, 0, 0, 0]);
    // What arrives after the refusal stays unread in the stream (the 413 closes the connection).
    s.write(Buffer.from('ijkl'));
    expect(s.readableLength).toBeGreaterThan(0);
  });

  it('a stream that closes before its end is cut_off, and a later error has no one to throw at', async () => {
    const s = new PassThrough();
    const read = readNodeBody(s, 100);
    s.write(Buffer.from('abc'));
    s.destroy();
    expect(await read).toEqual({ ok: false, reason: 'cut_off' });
    expect(listeners(s).slice(0, 2)).toEqual([0, 0]);
  });

  it('an empty body and a body already consumed both read as empty', async () => {
    const s = new PassThrough();
    const read = readNodeBody(s, 10);
    s.end();
    const body = await read;
    expect(body.ok && body.bytes.byteLength).toBe(0);
    expect(await readNodeBody(s, 10)).toEqual({ ok: true, bytes: new Uint8Array(0) });
  });
});
