// The CLI's escaping of server text (terminal-text.ts) on the cases the whole-program suite
// (test/cli/hostile-text.test.ts) does not reach: characters beyond U+FFFF, applying it twice,
// and what is left alone.
import { describe, expect, it } from 'vitest';
import { terminalJson, terminalText } from './terminal-text.js';

describe('terminalText', () => {
  it('escapes every byte of a control or format character as \\DDD, letters and symbols left as they are', () => {
    expect(terminalText('a\u0000b\tc\nd\u007f\u0085\u200b\u2028\u{E0001}')).toBe('a\\000b\\009c\\010d\\127\\194\\133\\226\\128\\139\\226\\128\\168\\243\\160\\128\\129');
    expect(terminalText('café Ωμέγα 東京 👍 a\\b "q"')).toBe('café Ωμέγα 東京 👍 a\\b "q"');
  });

  it('can be applied twice without changing what it wrote', () => {
    const once = terminalText('\u001b[2K\u202e');
    expect(terminalText(once)).toBe(once);
  });
});

describe('terminalJson', () => {
  it('parses back to the same value, with DEL, C1 and format characters (a pair beyond U+FFFF) as \\u escapes', () => {
    const value = { s: '\u001b\u007f\u009b\u202e\u{E0001}é' };
    const text = terminalJson(value);
    expect(text).toBe('{"s":"\\u001b\\u007f\\u009b\\u202e\\udb40\\udc01é"}');
    expect(JSON.parse(text)).toEqual(value);
  });
});
