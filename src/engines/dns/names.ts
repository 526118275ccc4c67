import { reverseNameOfText } from '../../core/net/reverse.js';
import { Problem } from '../../core/http/problems.js';
import { MAX_NAME_LENGTH } from '../../common/dns-types.js';

/** Letters, digits, hyphen and underscore (`_dmarc`, `_sip._tcp` are real names; docs/api.md). */
const LABEL = /^[a-z0-9_-]{1,63}$/;
/** A name already in canonical form: the common case, checked with one expression. */
const CANONICAL = /^[a-z0-9_-]{1,63}(?:\.[a-z0-9_-]{1,63})*$/;
/** Characters that would let a "name" smuggle URL syntax into the IDN conversion. */
const URL_SYNTAX = /[/?#@:%[\]\\\s]/;

function invalid(detail: string): Problem {
  return new Problem('invalid_parameter', detail);
}

/**
 * Converts a name to its canonical query form: A-labels (UTS #46 via the WHATWG URL host parser,
 * what `url.domainToASCII` does, available in every runtime), lower case, no trailing dot.
 * Each rejection names the rule that failed.
 */
export function canonicalName(input: string): string {
  let name = input.endsWith('.') ? input.slice(0, -1) : input;
  if (name.length <= MAX_NAME_LENGTH && CANONICAL.test(name)) return name;
  if (name === '') throw invalid('name must hold at least one label.');
  if (/[^\x20-\x7e]/.test(name)) {
    if (URL_SYNTAX.test(name)) throw invalid('name contains a character that is not allowed in a DNS name.');
    let host: string;
    try {
      host = new URL(`http://${name}/`).hostname;
    } catch {
      throw invalid('name is not a valid internationalised domain name.');
    }
    name = host;
  }
  name = name.toLowerCase();
  if (name.length > MAX_NAME_LENGTH) {
    throw invalid(`name is ${name.length} characters in A-label form; at most ${MAX_NAME_LENGTH} are allowed.`);
  }
  for (const label of name.split('.')) {
    if (label.length === 0) throw invalid('name has an empty label (two dots in a row, or a leading dot).');
    if (label.length > 63) throw invalid(`label "${label.slice(0, 20)}…" is ${label.length} octets; at most 63 are allowed.`);
    if (!LABEL.test(label)) throw invalid(`label "${label}" may hold only letters, digits, hyphen and underscore.`);
  }
  return name;
}

/**
 * The reverse-lookup name of an IP address (src/core/net/reverse.ts). No zone index: it names our
 * interface, not a host.
 */
export function reverseName(input: string): string {
  if (input.includes('%')) throw invalid('a PTR name must be an IP address without a zone index.');
  const name = reverseNameOfText(input);
  if (name === undefined) throw invalid('a PTR name must be an IPv4 or IPv6 address.');
  return name;
}
