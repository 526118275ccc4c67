// Forwarding headers, read as lists of hop addresses in order client → nearest proxy.
// An entry that is not an address (`unknown`, an obfuscated `_name`, garbage) is kept as
// undefined, because it breaks the chain: we cannot know who stands behind it.
//
// The client writes the left of these headers and a trusted proxy appends on the right, so the
// parse must never let the client's text reach into the proxy's part: a quoted-string that does
// not close would swallow every element after it, and a lenient host parser would find an
// address in text the client shaped. Both are read strictly, and what does not parse is a break.

/** `port` (1*5DIGIT) or `obfport` ("_" 1*(ALPHA / DIGIT / "." / "_" / "-")), RFC 7239 §6. */
const PORT = /^(?:\d{1,5}|_[A-Za-z0-9._-]+)$/;

/**
 * A node's address without its brackets and port: `[2001:db8::1]:443` → `2001:db8::1`,
 * `192.0.2.1:80` → `192.0.2.1`; undefined when anything else follows the address (text after
 * `]`, an empty or non-numeric port), so a node that is not well formed breaks the chain instead
 * of yielding the part of it that looks like an address.
 */
function hostOf(node: string): string | undefined {
  if (node.startsWith('[')) {
    const end = node.indexOf(']');
    if (end === -1) return undefined;
    const rest = node.slice(end + 1);
    if (rest !== '' && !(rest.startsWith(':') && PORT.test(rest.slice(1)))) return undefined;
    const inside = node.slice(1, end);
    // Brackets hold an IPv6 address only (RFC 7239 §6, RFC 3986 §3.2.2).
    return inside.includes(':') ? inside : undefined;
  }
  const colon = node.indexOf(':');
  if (colon === -1) return node;
  // One colon: IPv4 with a port. More: a bare IPv6 address (X-Forwarded-For writes them so).
  if (node.indexOf(':', colon + 1) !== -1) return node;
  return PORT.test(node.slice(colon + 1)) ? node.slice(0, colon) : undefined;
}

/** RFC 9110 §5.6.2 tchar. */
function isTchar(code: number): boolean {
  if ((code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)) return true;
  return "!#$%&'*+-.^_`|~".includes(String.fromCharCode(code));
}

/** One `forwarded-element`: its pairs by lower-case name, or undefined when it is malformed. */
type Element = Map<string, string> | undefined;

/**
 * RFC 7239 §4 `Forwarded`, parsed left to right by its grammar: elements separated by commas,
 * pairs by semicolons, a value a token or a quoted-string (RFC 9110 §5.6.4). A malformed element
 * is undefined; a quoted-string that never closes (RFC 9110 §5.6.4 requires the closing DQUOTE)
 * makes everything from its element on one malformed element, since where the client's text ends
 * can no longer be told. Empty list elements are ignored (RFC 9110 §5.6.1.2).
 */
function parseElements(text: string): Element[] {
  const elements: Element[] = [];
  let i = 0;
  const n = text.length;
  const skipOws = () => {
    while (i < n && (text[i] === ' ' || text[i] === '\t')) i++;
  };
  const token = (): string => {
    const start = i;
    while (i < n && isTchar(text.charCodeAt(i))) i++;
    return text.slice(start, i);
  };
  /** A quoted-string's content, or undefined when it does not close. */
  const quoted = (): string | undefined => {
    let value = '';
    i++; // the opening DQUOTE
    while (i < n) {
      const ch = text.charAt(i);
      if (ch === '"') {
        i++;
        return value;
      }
      if (ch === '\\') {
        if (i + 1 >= n) return undefined;
        value += text.charAt(i + 1);
        i += 2;
      } else {
        value += ch;
        i++;
      }
    }
    return undefined;
  };
  /** Skips a malformed element's rest up to its comma; false when an open quote runs to the end. */
  const skipToComma = (): boolean => {
    while (i < n && text[i] !== ',') {
      if (text[i] !== '"') i++;
      else if (quoted() === undefined) return false;
    }
    return true;
  };

  while (i <= n) {
    skipOws();
    if (i >= n) break;
    if (text[i] === ',') {
      i++;
      continue;
    }
    const pairs = new Map<string, string>();
    let element: Element = pairs;
    for (;;) {
      skipOws();
      const name = token().toLowerCase();
      if (name === '' || text[i] !== '=') {
        element = undefined;
        break;
      }
      i++;
      let value: string | undefined;
      if (text[i] === '"') {
        value = quoted();
        if (value === undefined) {
          elements.push(undefined);
          return elements;
        }
      } else {
        value = token();
        if (value === '') {
          element = undefined;
          break;
        }
      }
      // §4: a parameter MUST NOT occur more than once in an element.
      if (pairs.has(name)) {
        element = undefined;
        break;
      }
      pairs.set(name, value);
      skipOws();
      if (text[i] === ';') {
        i++;
        continue;
      }
      if (i >= n || text[i] === ',') break;
      element = undefined;
      break;
    }
    if (element === undefined && !skipToComma()) {
      elements.push(undefined);
      return elements;
    }
    elements.push(element);
    i++; // the comma, or past the end
  }
  return elements;
}

/** RFC 7239 `Forwarded`: the `for=` node of each element; elements without one break the chain. */
export function forwardedChain(header: string): (string | undefined)[] {
  return parseElements(header).map((element) => {
    const node = element?.get('for');
    return node === undefined || node === '' ? undefined : hostOf(node);
  });
}

/** `X-Forwarded-For: client, proxy1, proxy2`. */
export function xForwardedForChain(header: string): (string | undefined)[] {
  return header.split(',').map((entry) => {
    const node = entry.trim();
    return node === '' ? undefined : hostOf(node);
  });
}
