import { describe, expect, it } from 'vitest';
import { utf8Length } from './respond.js';

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
  ])('counts %s as the encoder does', (_name, text) => {
    expect(utf8Length(text)).toBe(encodedLength(text));
  });
});
