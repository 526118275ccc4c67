import { describe, expect, it } from 'vitest';
import { envelopeSerialized, serialize, utf8Length } from './respond.js';
import type { RequestContext } from './types.js';

// Content-Length must be the byte count of what Node's encoder writes, so Node's own encoder is
// the oracle here, not figures worked out by hand.
const encodedLength = (text: string) => new TextEncoder().encode(text).length;

describe('utf8Length', () => {
  it.each([
    ['empty', ''],
    ['ASCII', '{"data":{"address":"8.8.8.8"}}'],
    ['ASCII with control characters', 'tab\there\u0001'],
    ['Latin-1 (2 bytes a character)', 'São Paulo, Zürich'],
    ['CJK (3 bytes a character)', '東京都'],
    ['a surrogate pair (4 bytes)', 'pin 📍 here'],
    ['ASCII then one 2-byte character at the very end', `${'a'.repeat(600)}é`],
    ['a lone high surrogate at the end (sent as U+FFFD)', 'x\uD800'],
    ['a lone high surrogate before a 2-byte character', '\uD800é'],
    ['a lone low surrogate', 'a\uDC00b'],
    // Past the encoder's scratch buffer (16 384 units), counted by the loop.
    ['a long text past the scratch buffer, with a pair and a lone surrogate', `${'ö'.repeat(20_000)}📍\uDC00`],
    ['a text just inside the scratch buffer', `${'東'.repeat(16_383)}é`],
  ])('counts %s as the encoder does', (_name, text) => {
    expect(utf8Length(text)).toBe(encodedLength(text));
  });
});

describe('envelope Content-Length', () => {
  // A runtime may make request ids of another shape than a 36-character UUID.
  it.each(['short', 'f47ac10b-58cc-4372-a567-0e02b2c3d479', `req-${'x'.repeat(60)}`])('is the body length for the request id %s', (requestId) => {
    const ctx = { req: { origin: () => 'http://localhost' }, requestId, receivedAt: 0, publicUrl: undefined, params: {}, rate: undefined, caller: undefined } as unknown as RequestContext;
    const reply = envelopeSerialized(ctx, serialize({ status: 'ok' }), 'no-store');
    const at = reply.headers.indexOf('Content-Length');
    expect(Number(reply.headers[at + 1])).toBe(encodedLength(reply.body ?? ''));
  });
});
