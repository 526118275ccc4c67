// Text a server chose (a DNS answer, a problem's title or detail) as it goes into an alert, which
// lands in chat apps that act on what they read (docs/monitor.md, "What an alert carries"): line
// breaks become spaces; control, format and bidi characters (U+202E and its kind, which reorder
// what a reader sees) are removed; the length is capped; and the rest is quoted as inline code
// with the characters chat targets act on in it replaced (an `@everyone` mention, a `<!channel>`),
// so a markdown link shows as text and nobody is paged by a server's words.

/** The most of one server-chosen text an alert carries, in characters (graphemes). */
export const ALERT_TEXT_MAX = 200;

/** Controls, formats (bidi overrides and isolates, zero-width characters) and line or paragraph separators. */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;
const BREAKS = /[\t\n\v\f\r\u0085\u2028\u2029]+/g;

/** Whole characters as a reader sees them (an emoji with its modifiers is one): a cap never cuts one apart. */
const GRAPHEMES = new Intl.Segmenter('en', { granularity: 'grapheme' });

/** `text` made inert for a chat message and quoted as inline code. */
export function alertQuoted(text: string): string {
  const plain = text.replace(BREAKS, ' ').replace(INVISIBLE, '').trim();
  const chars = Array.from(GRAPHEMES.segment(plain), (s) => s.segment);
  const capped = chars.length > ALERT_TEXT_MAX ? `${chars.slice(0, ALERT_TEXT_MAX - 1).join('')}…` : plain;
  // A backtick would end the code span; @ names people and <…> is Slack's mention and link syntax.
  const quiet = capped.replaceAll('`', "'").replaceAll('@', '\uff20').replaceAll('<', '\u2039').replaceAll('>', '\u203a');
  return `\`${quiet}\``;
}
