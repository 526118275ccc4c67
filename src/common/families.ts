// src/common/: rules the clients (the page, the command line's client code) share with the server;
// besides the contract's generated types, the one part of src/ a client may import; it imports nothing else.
// Both address families, as plain values: what each family's check found, the verdict a person
// reads, and which relay-run IPv6 addresses to name. The page (web/connection/dual-stack.ts) and the command
// line (`netdiag ip --both`, src/cli/ip/families.ts) ask and draw; the rules are this one file, so
// both say the same for the same findings (test/ip/dual-stack-verdict.test.ts). The words are message
// templates (src/common/template.ts): English here, which the command line speaks; the page passes
// the same messages in the reader's language (web/i18n/).
import { fill, type Params } from './template.js';

export type Family = 'ipv4' | 'ipv6';

export const FAMILY_NAME: Readonly<Record<Family, string>> = { ipv4: 'IPv4', ipv6: 'IPv6' };

/** A family's network as its check shows it, `AS15169 Google LLC`, or null when unknown. */
export const networkText = (network: { asn: number | null; organization: string | null }): string | null =>
  network.asn === null ? null : [`AS${String(network.asn)}`, network.organization].filter((p) => p !== null).join(' ');

/**
 * How long a family's origin may take before the family counts as broken. A family that is
 * missing fails at once (no route, no address); one that is broken swallows packets, and a browser
 * waits on it before falling back (Happy Eyeballs, RFC 8305, only helps where a name has both).
 * Seconds, not the 250 ms of Happy Eyeballs: a slow but working link must not read as broken.
 */
export const FAMILY_TIMEOUT_MS = 4000;

/** What asking one family's origin found. */
export type FamilyCheck =
  /** It answered, over the family it was asked over. */
  | { state: 'ok'; ms: number; address: string; network: string | null }
  /** It answered, but over the other family: the origin's name has records of both. */
  | { state: 'mixed'; ms: number; address: string }
  /** It failed at once (no route, no address, refused): the family is not there. */
  | { state: 'failed'; ms: number }
  /** Nothing within FAMILY_TIMEOUT_MS: the family is there but broken. */
  | { state: 'timeout'; ms: number }
  /**
   * Not asked: the deployment has no origin for the family (`no-origin`), or names it by an IPv6
   * address (`literal`), which no Content-Security-Policy can name, so the page may not connect to
   * it; or asked, and the browser refused to send the request (`refused`). `viaPage` when the page
   * itself came over the family.
   */
  | { state: 'unchecked'; reason: UncheckedReason; viaPage?: { address: string; network: string | null } };

type UncheckedReason = 'no-origin' | 'literal' | 'refused';

/**
 * A check of the family this page itself came over that "failed at once" was never sent: the
 * family plainly works. Browsers refuse a request from a page to an address more private than its
 * own (Chromium's Private Network Access: a page opened at a LAN address asking an origin on
 * loopback, say), and the failure looks like a missing family to the page's script. Said as
 * refused, with the page's own connection standing for the family.
 */
export function settleCheck(family: Family, check: FamilyCheck, page: { family: Family; address: string; network: string | null } | undefined): FamilyCheck {
  if (check.state !== 'failed' || page === undefined || page.family !== family) return check;
  return { state: 'unchecked', reason: 'refused', viaPage: { address: page.address, network: page.network } };
}


/** Every sentence and phrase the rules below say, in English; the page's catalogues translate each. */
export const FAMILY_MESSAGES = {
  'families.both': 'Both: IPv4 and IPv6 work.',
  'families.only': '{name} only: there is no {other} on this connection (it failed at once, in {time}, so nothing waits for it).',
  'families.broken': '{other} is broken: it did not answer in {time}. {name} works, but sites that offer {other} may load slowly while browsers and apps wait on it before falling back.',
  'families.mixed': "{name} works; {other} could not be checked: this server's {other} address also answers over {name}.",
  'families.partial': '{name} works; {other} was not checked: {why}.',
  'families.neither': 'Neither family answered from its own address: the check could not tell which of them this connection has.',
  'families.tunnel-6to4': "6to4: IPv6 tunnelled over IPv4; the network shown is the relay's, not yours",
  'families.tunnel-teredo': "Teredo: IPv6 tunnelled over IPv4 through a relay; the network shown is the relay's, not yours",
  'families.chose-by-address': 'this page was opened by an {name} address, so the browser had no choice',
  'families.chose-own': "this page's own connection came over it",
  'families.why-literal': "this server names its {name} origin by an address, which a page's security policy cannot allow from another origin (open the page at that address, or run netdiag ip --both)",
  'families.why-refused': "the browser refused to ask this server's {name}-only address (browsers keep a page from asking an address more private than its own; run netdiag ip --both)",
  'families.why-no-origin': 'this server has no {name}-only address',
  'families.network-unknown': 'network unknown',
  'families.answered-in': 'answered in {time}',
  'families.not-checked': 'not checked',
  'families.answered-over-other': 'its address answered over {other} ({address}): the name has records of both families',
  'families.none': 'none',
  'families.failed-in': 'failed at once, in {time}',
  'families.no-answer': 'no answer',
  'families.nothing-in': 'nothing in {time}: broken',
  'families.page-came-over': 'this page came over it',
  'families.separator': '; ',
} as const;

type FamilyMessages = Readonly<Record<keyof typeof FAMILY_MESSAGES, string>>;

/** The messages in one language and how it writes a duration. */
export interface FamilyWords {
  messages: FamilyMessages;
  time: (ms: number) => string;
}

/** The command line's words, and the page's until it knows the reader's language. */
const ENGLISH_FAMILY_WORDS: FamilyWords = { messages: FAMILY_MESSAGES, time: formatMs };

const say = (words: FamilyWords, key: keyof FamilyMessages, params?: Params): string => fill(words.messages[key], params);

interface Verdict {
  kind: 'both' | 'ipv4-only' | 'ipv6-only' | 'ipv4-broken' | 'ipv6-broken' | 'neither' | 'partial';
  text: string;
}

const works = (check: FamilyCheck): boolean => check.state === 'ok' || (check.state === 'unchecked' && check.viaPage !== undefined);

/** The verdict on both families, in words a person understands, with how long each took. */
export function verdict(v4: FamilyCheck, v6: FamilyCheck, words: FamilyWords = ENGLISH_FAMILY_WORDS): Verdict {
  const checks = { ipv4: v4, ipv6: v6 };
  if (works(v4) && works(v6)) return { kind: 'both', text: say(words, 'families.both') };
  for (const [family, other] of [['ipv4', 'ipv6'], ['ipv6', 'ipv4']] as const) {
    if (!works(checks[family])) continue;
    const check = checks[other];
    const names = { name: FAMILY_NAME[family], other: FAMILY_NAME[other] };
    if (check.state === 'failed') return { kind: `${family}-only`, text: say(words, 'families.only', { ...names, time: words.time(check.ms) }) };
    if (check.state === 'timeout') return { kind: `${other}-broken`, text: say(words, 'families.broken', { ...names, time: words.time(check.ms) }) };
    if (check.state === 'mixed') return { kind: 'partial', text: say(words, 'families.mixed', names) };
    return { kind: 'partial', text: say(words, 'families.partial', { ...names, why: uncheckedWhy(check.state === 'unchecked' ? check.reason : 'no-origin', names.other, words) }) };
  }
  return { kind: 'neither', text: say(words, 'families.neither') };
}

/** Expands an IPv6 address's text to its eight 16-bit groups. */
function groups(address: string): number[] | undefined {
  if (!address.includes(':')) return undefined;
  const [head = '', tail] = address.split('::');
  const part = (text: string) => (text === '' ? [] : text.split(':').map((g) => Number.parseInt(g, 16)));
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/**
 * IPv6 addresses whose network is a relay's, not the caller's: 6to4 (2002::/16, RFC 3056) and
 * Teredo (2001::/32, RFC 4380) carry IPv6 inside IPv4, so their network and location are those
 * of whoever runs the relay (and both are deprecated for good reason).
 */
export function tunnelOf(address: string, words: FamilyWords = ENGLISH_FAMILY_WORDS): string | undefined {
  const g = groups(address);
  if (g === undefined) return undefined;
  if (g[0] === 0x2002) return say(words, 'families.tunnel-6to4');
  if (g[0] === 0x2001 && g[1] === 0) return say(words, 'families.tunnel-teredo');
  return undefined;
}

/** Which family the browser chose for this page (its own connection's), or why it had no choice. */
export function preference(pageFamily: Family, pageHost: string, words: FamilyWords = ENGLISH_FAMILY_WORDS): { value: string; detail: string } {
  const name = FAMILY_NAME[pageFamily];
  if (/^\[.*\]$/.test(pageHost) || /^[0-9.]+$/.test(pageHost)) return { value: name, detail: say(words, 'families.chose-by-address', { name }) };
  return { value: name, detail: say(words, 'families.chose-own') };
}

function uncheckedWhy(reason: UncheckedReason, name: string, words: FamilyWords): string {
  switch (reason) {
    case 'literal':
      return say(words, 'families.why-literal', { name });
    case 'refused':
      return say(words, 'families.why-refused', { name });
    case 'no-origin':
      return say(words, 'families.why-no-origin', { name });
  }
}

function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${ms.toFixed(0)} ms`;
}

/** A check's value and the line under it, as the page shows them. */
export function describeCheck(family: Family, check: FamilyCheck, words: FamilyWords = ENGLISH_FAMILY_WORDS): { value: string; detail: string } {
  const name = FAMILY_NAME[family];
  const joined = (parts: (string | undefined)[]) => parts.filter((p) => p !== undefined).join(say(words, 'families.separator'));
  switch (check.state) {
    case 'ok':
      return { value: check.address, detail: joined([check.network ?? say(words, 'families.network-unknown'), say(words, 'families.answered-in', { time: words.time(check.ms) }), tunnelOf(check.address, words)]) };
    case 'mixed':
      return { value: say(words, 'families.not-checked'), detail: say(words, 'families.answered-over-other', { other: family === 'ipv4' ? 'IPv6' : 'IPv4', address: check.address }) };
    case 'failed':
      return { value: say(words, 'families.none'), detail: say(words, 'families.failed-in', { time: words.time(check.ms) }) };
    case 'timeout':
      return { value: say(words, 'families.no-answer'), detail: say(words, 'families.nothing-in', { time: words.time(check.ms) }) };
    case 'unchecked':
      if (check.viaPage !== undefined) {
        return {
          value: check.viaPage.address,
          detail: joined([check.viaPage.network ?? say(words, 'families.network-unknown'), say(words, 'families.page-came-over'), check.reason === 'refused' ? uncheckedWhy('refused', name, words) : undefined, tunnelOf(check.viaPage.address, words)]),
        };
      }
      return { value: say(words, 'families.not-checked'), detail: uncheckedWhy(check.reason, name, words) };
  }
}
