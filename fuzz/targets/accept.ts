// Fuzz target: the negotiation headers. `Accept` (preferredForm, src/core/http/accept.ts, RFC 9110
// §12.5.1) chooses text, JSON or HTML for `/`, the problem pages and the text routes' problems;
// `Accept-Encoding` (chosenCoding, src/core/http/static-asset.ts, §12.5.3) chooses Brotli, gzip or
// none for the static assets. The server reads no Accept-Language: the page chooses its language
// from the browser's list (chooseLanguage, web/i18n/languages.ts), fuzzed here on the same text.
// Each is a total function whose answer is one of what was offered, and one the client named
// (directly or by a wildcard): never a form or coding the header did not let in.
import { preferredForm } from '../../src/core/http/accept.js';
import { chosenCoding } from '../../src/core/http/static-asset.js';
import { chooseLanguage, LANGUAGES } from '../../web/i18n/languages.js';
import { check, total } from '../invariant.js';

type Context = Parameters<typeof preferredForm>[0];

/** A request with one header, `name`: only `req.header` is read by these functions (as accept.test.ts builds it). */
const requestWith = (name: string, value: string): Context => ({ req: { header: (asked: string) => (asked === name ? value : undefined) } }) as Context;

/** The offers the routes make (ip/text-routes.ts, core/http/pages.ts), and one of each alone. */
const OFFERS = [['html', 'json'], ['html'], ['json'], ['json', 'html']] as const;

export function fuzz(data: Buffer): void {
  // Node and Workers hand header values over as latin1 text (one character per byte).
  const header = data.toString('latin1');
  const lower = header.toLowerCase();
  const named = (word: string) => lower.includes(word) || lower.includes('*');

  for (const forms of OFFERS) {
    const form = total('accept/never-throws', () => preferredForm(requestWith('accept', header), forms));
    check(form === 'text' || (forms as readonly string[]).includes(form), 'accept/one-of-the-offers', () => `${form} for ${JSON.stringify(header)} offering ${forms.join(', ')}`);
    check(form === 'text' || named(form), 'accept/named-by-the-client', () => `${form} for ${JSON.stringify(header)}`);
  }

  const coding = total('accept/never-throws', () => chosenCoding(requestWith('accept-encoding', header)));
  check(['br', 'gzip', 'identity'].includes(coding), 'accept/one-of-the-offers', () => `coding ${coding} for ${JSON.stringify(header)}`);
  check(coding === 'identity' || named(coding), 'accept/named-by-the-client', () => `coding ${coding} for ${JSON.stringify(header)}`);

  // The page's choice: a stored choice, else the first of the browser's languages it has, else English.
  const language = total('accept/never-throws', () => chooseLanguage(header, header.split(',')));
  check(LANGUAGES.includes(language), 'accept/one-of-the-offers', () => `language ${JSON.stringify(language)}`);
  check(language.code === 'en' || lower.includes(language.code), 'accept/named-by-the-client', () => `language ${language.code} for ${JSON.stringify(header)}`);
}
