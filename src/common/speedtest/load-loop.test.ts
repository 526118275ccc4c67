import { describe, expect, it } from 'vitest';
import { runLoadedDirection } from './load-loop.js';
import type { LoadTransport } from './load-transport.js';
import { profileOf } from './working.js';

/** A transport no call may reach: a refused stream count must stop the direction before it sends anything. */
const untouchable = new Proxy({}, { get: (_, name) => () => { throw new Error(`the transport was asked ${String(name)}`); } }) as LoadTransport;

describe('runLoadedDirection', () => {
  it.each([0, 17, 1.5])('refuses %s streams before it sends anything', async (streams) => {
    const run = runLoadedDirection(untouchable, { direction: 'download', maxBytes: 1e6, profile: profileOf('light'), streams, signal: new AbortController().signal, onProgress: () => undefined });
    await expect(run).rejects.toThrow(new RangeError(`streams must be a whole number from 1 to 16, got ${String(streams)}`));
  });
});
