import { describe, expect, it } from 'vitest';
import { ALERT_TEXT_MAX, alertQuoted } from './alert-text.js';

describe('a server\'s words in an alert', () => {
  it('quotes them as inline code, with what chat apps act on replaced', () => {
    expect(alertQuoted('@everyone see [this](https://evil.example) <!here> `x`')).toBe("`\uff20everyone see [this](https://evil.example) \u2039!here\u203a 'x'`");
  });

  it('removes control, format and bidi characters, and turns line breaks into spaces', () => {
    const hostile = 'a\u202egnp.exe\u202c b\u2066c\u2069\u200bd\u0007\u001b[31me\r\nf\u2028g\u009b2J';
    expect(alertQuoted(hostile)).toBe('`agnp.exe bcd[31me f g2J`');
    expect(alertQuoted(hostile)).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u);
  });

  it(`caps them at ${String(ALERT_TEXT_MAX)} characters, counted as a reader sees them, never cutting one apart`, () => {
    // An emoji with a skin-tone modifier: two code points, one character.
    const long = '😀🏽'.repeat(500);
    const quoted = alertQuoted(long);
    const shown = Array.from(new Intl.Segmenter('en', { granularity: 'grapheme' }).segment(quoted.slice(1, -1)), (s) => s.segment);
    expect(shown).toHaveLength(ALERT_TEXT_MAX);
    expect(shown.slice(0, -1).every((g) => g === '😀🏽')).toBe(true);
    expect(quoted.endsWith('…`')).toBe(true);
    expect(alertQuoted('x'.repeat(ALERT_TEXT_MAX))).toBe(`\`${'x'.repeat(ALERT_TEXT_MAX)}\``);
  });
});
