/**
 * Text a terminal shows as it is: every control character written as an escape a reader can see
 * (`\x1b`, `\r`, `\u202e`) instead of acted on. The text answers for curl go straight to a
 * terminal, and a problem's detail quotes what the client sent (`?ip=` with ESC, BEL and CR LF in
 * it would recolour and rewrite the asker's terminal). JSON needs none of this: its
 * encoder escapes C0 controls already, and a JSON reader does not print them raw.
 */
export function printable(text: string): string {
  return UNPRINTABLE.test(text) ? text.replace(UNPRINTABLE_ALL, escapeOne) : text;
}

/**
 * C0 controls and DEL, C1 controls (which some terminals act on as CSI and OSC), the line and
 * paragraph separators, and the bidirectional overrides and isolates that reorder what follows
 * (Unicode TR #9: a "Trojan Source" line reads differently from what it holds).
 */
const CLASS = '[\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069]';
const UNPRINTABLE = new RegExp(CLASS, 'u');
const UNPRINTABLE_ALL = new RegExp(CLASS, 'gu');

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeOne(c: string): string {
  const named = NAMED[c];
  if (named !== undefined) return named;
  const code = c.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}
