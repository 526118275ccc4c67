import { describe, expect, it } from 'vitest';
import { printable } from './printable.js';

describe('printable', () => {
  it('writes C0, DEL, C1, separators and bidirectional controls as visible escapes', () => {
    expect(printable('a\u001b[31mb\u0007\r\n\t\u0000\u007f\u0085\u009b\u2028\u2029\u202e\u2066\u2069z')).toBe('a\\x1b[31mb\\x07\\r\\n\\t\\x00\\x7f\\x85\\x9b\\u2028\\u2029\\u202e\\u2066\\u2069z');
  });
  it('leaves every other character as it is, letters of any script and emoji included', () => {
    const text = 'São Paulo, 東京, Zürich 🌍 "quoted" \\ back';
    expect(printable(text)).toBe(text);
  });
});
