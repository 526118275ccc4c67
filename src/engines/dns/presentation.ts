import { DnsFailure } from '../../core/ports/dns-transport.js';
// Names of a DNS message in presentation form, as the API gives them (docs/api.md, "DNS"): read
// from the message's own octets, since a label is any octets (RFC 2181 §11) and dns-packet
// decodes each as UTF-8, which turns a byte that is no UTF-8 into U+FFFD and a dot inside a
// label into a label boundary.

/** A name's wire form is at most 255 octets (RFC 1035 §3.1). */
const MAX_WIRE_OCTETS = 255;

/**
 * One octet of a label as RFC 1035 §5.1 writes it: `\DDD` (decimal) for an octet that is not
 * printable ASCII, `\X` for a printable one that has a meaning in presentation form (the dot,
 * the backslash, and as BIND and Knot also escape them the quote, parentheses, semicolon, `@`
 * and `$`), the character itself otherwise; A-Z lower-cased, DNS names comparing without case
 * in ASCII only (RFC 4343 §3).
 */
function octet(byte: number): string {
  if (byte <= 0x20 || byte >= 0x7f) return `\\${String(byte).padStart(3, '0')}`;
  if (byte >= 0x41 && byte <= 0x5a) return String.fromCharCode(byte + 0x20);
  const char = String.fromCharCode(byte);
  return '".;()\\@$'.includes(char) ? `\\${char}` : char;
}

/**
 * The name at `offset` of `message`: lower case, no trailing dot ('' is the root), every label
 * in presentation form. Compression pointers are followed only backwards (RFC 1035 §4.1.4: to
 * a prior occurrence), so a loop of pointers cannot hold the reader.
 */
export function presentedName(message: Uint8Array, offset: number): { text: string; end: number } {
  const labels: string[] = [];
  let at = offset;
  let end: number | undefined;
  let octets = 1;
  // Where the labels being read began: a pointer must lead before it, so each jump goes further
  // back and the walk ends.
  let start = offset;
  for (;;) {
    const length = message[at];
    if (length === undefined) throw new DnsFailure('invalid', 'a name runs past the end of the message');
    if (length === 0) {
      at += 1;
      break;
    }
    if ((length & 0xc0) === 0xc0) {
      const target = ((length & 0x3f) << 8) | (message[at + 1] ?? 0xff);
      if (at + 1 >= message.length || target >= start) throw new DnsFailure('invalid', 'a name has a compression pointer that does not point back');
      end ??= at + 2;
      at = target;
      start = target;
      continue;
    }
    if ((length & 0xc0) !== 0) throw new DnsFailure('invalid', 'a name has a label of an unknown kind');
    octets += length + 1;
    if (octets > MAX_WIRE_OCTETS) throw new DnsFailure('invalid', 'a name is longer than 255 octets');
    if (at + 1 + length > message.length) throw new DnsFailure('invalid', 'a name runs past the end of the message');
    let label = '';
    for (let i = at + 1; i <= at + length; i++) label += octet(message[i] ?? 0);
    labels.push(label);
    at += 1 + length;
  }
  return { text: labels.join('.'), end: end ?? at };
}
