// The page's words and numbers in the reader's language. The language is the one the page's root
// element carries (`<html lang>`, set once at start by web/i18n/page-text.ts), so there is no
// language state to share between sections; outside a browser (unit tests) it is English, unless
// a test sets the root element's language as the page does.
import { fill, type Params } from '../../src/common/template.js';
import type { FamilyWords } from '../../src/common/families.js';
import { en, type Catalogue, type MessageKey } from './en.js';

// The catalogues at hand: English, and the reader's once fetched (page-text.ts adds it before any
// section writes a word). Written once at start, read by every t() after.
const catalogues = new Map<string, Catalogue>([['en', en]]);

/** Makes a language's catalogue the one t() reads for it. */
export function addCatalogue(code: string, messages: Catalogue): void {
  catalogues.set(code, messages);
}

function code(): string {
  return typeof document === 'undefined' ? 'en' : document.documentElement.lang;
}

/** The page's messages: its language's, or English's until that is at hand. */
function messages(): Catalogue {
  return catalogues.get(code()) ?? en;
}

/** First Strong Isolate and Pop Directional Isolate (Unicode Bidirectional Algorithm, UAX #9 §2.4). */
const FSI = '\u2068';
const PDI = '\u2069';

const isolated = (text: string): string => `${FSI}${text}${PDI}`;

/** Right-to-left letters (Hebrew, Arabic and their presentation forms). */
const RTL_LETTER = /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]/;

/**
 * A value isolated when it holds no right-to-left letter (a figure, an address, a Latin name):
 * text in the page's own script reads right as it is, and isolating a sentence whose first
 * letters sit in an isolate of their own would lay it out left to right (UAX #9 P2 skips them).
 */
const ownDirection = (text: string): string => (RTL_LETTER.test(text) ? text : isolated(text));

/** Messages that are a figure as a whole, like a unit's: a grade with its increase, a rate of round trips. */
const FIGURES: ReadonlySet<MessageKey> = new Set(['figure.bloat', 'figure.rpm', 'monitor.figure']);

/**
 * A message in the page's language, its placeholders filled. On a right-to-left page each value
 * with no right-to-left letter is isolated (FSI … PDI: laid out by its own first strong letter,
 * left to right when it has none), and so is each figure with its unit (`unit.*`, FIGURES):
 * otherwise the bidirectional algorithm lays an address, a name or "3427 Mbps" out in the
 * sentence's direction, and a reader sees "1::" for "::1" or "Mbps 3427". A left-to-right page
 * needs none, and gets none.
 */
export function t(key: MessageKey, params?: Params): string {
  const unit = key.startsWith('unit.');
  if (typeof document === 'undefined' || document.documentElement.dir !== 'rtl') {
    const text = fill(messages()[key], params);
    return unit ? unbroken(text) : text;
  }
  const values = params === undefined ? undefined : Object.fromEntries(Object.entries(params).map(([name, value]) => [name, ownDirection(value)]));
  const text = fill(messages()[key], values);
  // A figure is one unit of meaning left to right whatever its words ("20 763 RPM (ممتازة)").
  if (FIGURES.has(key)) return isolated(text);
  return unit ? ownDirection(unbroken(text)) : text;
}

/** A placeholder, as src/common/template.ts's fill() reads them. */
const PLACEHOLDER = /\{([a-z][a-zA-Z0-9]*)\}/g;

/** A message's value as DOM: text, or nodes of its own (a name in a <bdi>, a message of such parts). */
export type Part = string | Node;

/**
 * A message as DOM parts, its placeholders filled: a string value as t() fills it, a list of
 * nodes as it is. A name or a place given in a <bdi> is an isolate in the DOM itself (HTML's bdi
 * element; UAX #9 isolates), so on a right-to-left page "fra, Frankfurt" reads as two units in
 * the sentence's order whatever the letters around them, and a script or test can find each one.
 */
export function tParts(key: MessageKey, params: Readonly<Record<string, string | readonly Part[]>>): Part[] {
  const rtl = typeof document !== 'undefined' && document.documentElement.dir === 'rtl';
  const parts: Part[] = [];
  let from = 0;
  const template = messages()[key];
  for (const match of template.matchAll(PLACEHOLDER)) {
    parts.push(template.slice(from, match.index));
    from = match.index + match[0].length;
    const value = params[match[1] ?? ''];
    if (value === undefined) parts.push(match[0]);
    else if (typeof value === 'string') parts.push(rtl ? ownDirection(value) : value);
    else parts.push(...value);
  }
  parts.push(template.slice(from));
  return parts.filter((part) => part !== '');
}

/** A name or a place set apart from the sentence around it (a <bdi>: its direction its own). */
export function isolatedName(text: string): HTMLElement {
  const element = document.createElement('bdi');
  element.textContent = text;
  return element;
}

/**
 * A number and its unit on one line: the space between them made a no-break space (UAX #14 class
 * GL), so "1.5 ms" never ends one line with "1.5" and starts the next with "ms", in any direction.
 */
const unbroken = (text: string): string => text.replaceAll(' ', '\u00a0');


// Intl formatters are costly to make and the live rate formats five times a second: one per
// language and precision, made once. A cache of pure values, not state anyone reads.
const formats = new Map<string, Intl.NumberFormat>();

/**
 * A number with `digits` decimals, as the language writes it (its decimal sign, its digits, its
 * grouping sign), every figure of the page through here. Thousands are always grouped: with the
 * language's own rule some group from five digits only (CLDR minimumGroupingDigits 2, Spanish),
 * and a result read "8292 Mbps" beside "35 020 RPM".
 */
export function num(value: number, digits = 0): string {
  const language = code();
  const key = `${language}/${String(digits)}`;
  let format = formats.get(key);
  if (format === undefined) {
    format = new Intl.NumberFormat(language, { minimumFractionDigits: digits, maximumFractionDigits: digits, useGrouping: 'always' });
    formats.set(key, format);
  }
  return format.format(value);
}

/** A date and time as the language writes it. */
export function dateTime(at: number, style: Intl.DateTimeFormatOptions): string {
  return new Intl.DateTimeFormat(code(), style).format(at);
}

/** The kinds of part that belong to a date-time's time: the first of them starts the time. */
const TIME_PARTS: ReadonlySet<Intl.DateTimeFormatPartTypes> = new Set(['hour', 'minute', 'second', 'dayPeriod', 'fractionalSecond', 'timeZoneName']);

/**
 * A date and time as `dateTime` writes them, cut into the date, the language's own text between
 * the two (`, ` in English, a space in Japanese) and the time, so a narrow cell may wrap between
 * them; the three read together are `dateTime`'s text.
 */
export function dateAndTime(at: number, style: Intl.DateTimeFormatOptions): { date: string; between: string; time: string } {
  const parts = new Intl.DateTimeFormat(code(), style).formatToParts(at);
  const first = parts.findIndex((p) => TIME_PARTS.has(p.type));
  const dateParts = first === -1 ? parts : parts.slice(0, first);
  const between = dateParts.at(-1)?.type === 'literal' ? (dateParts.pop()?.value ?? '') : '';
  const text = (list: Intl.DateTimeFormatPart[]) => list.map((p) => p.value).join('');
  return { date: text(dateParts), between, time: first === -1 ? '' : text(parts.slice(first)) };
}

/** Names joined as the language lists them: `a`, `a and b`, `a, b and c`. */
export function listed(names: readonly string[]): string {
  if (names.length <= 1) return names[0] ?? '';
  if (names.length === 2) return t('list.pair', { first: names[0] ?? '', second: names[1] ?? '' });
  return t('list.last', { rest: names.slice(0, -1).join(t('list.separator')), last: names.at(-1) ?? '' });
}

/** The both-families check's words (src/common/families.ts) in the page's language. */
export function familyWords(): FamilyWords {
  return { messages: messages(), time: (ms) => (ms >= 1000 ? t('unit.s', { value: num(ms / 1000, 1) }) : t('unit.ms', { value: num(ms) })) };
}
