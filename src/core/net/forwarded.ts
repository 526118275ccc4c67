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

/** A quoted-string that never closed: where the client's text ends can no longer be told. */
const UNCLOSED = Symbol('unclosed');

/** A cursor over a `Forwarded` value, reading the pieces of RFC 9110 §5.6's list grammar. */
class FieldCursor {
  i = 0;
  constructor(readonly text: string) {}

  get atEnd(): boolean {
    return this.i >= this.text.length;
  }

  at(ch: string): boolean {
    return this.text[this.i] === ch;
  }

  skipOws(): void {
    while (this.at(' ') || this.at('\t')) this.i++;
  }

  token(): string {
    const start = this.i;
    while (this.i < this.text.length && isTchar(this.text.charCodeAt(this.i))) this.i++;
    return this.text.slice(start, this.i);
  }

  /** A quoted-string's content (RFC 9110 §5.6.4), or UNCLOSED when it does not close. */
  quoted(): string | typeof UNCLOSED {
    const { text } = this;
    let value = '';
    this.i++; // the opening DQUOTE
    while (this.i < text.length) {
      const ch = text.charAt(this.i);
      if (ch === '"') {
        this.i++;
        return value;
      }
      if (ch === '\\') {
        if (this.i + 1 >= text.length) return UNCLOSED;
        value += text.charAt(this.i + 1);
        this.i += 2;
      } else {
        value += ch;
        this.i++;
      }
    }
    return UNCLOSED;
  }

  /** Skips a malformed element's rest up to its comma; false when an open quote runs to the end. */
  skipToComma(): boolean {
    while (!this.atEnd && !this.at(',')) {
      if (!this.at('"')) this.i++;
      else if (this.quoted() === UNCLOSED) return false;
    }
    return true;
  }
}

/** One pair's value: a token or a quoted-string; '' when there is neither. */
function valueAt(cursor: FieldCursor): string | typeof UNCLOSED {
  return cursor.at('"') ? cursor.quoted() : cursor.token();
}

/**
 * One element's `name=value` pairs, separated by semicolons, up to its comma or the end:
 * undefined when malformed (the cursor then stands inside it), UNCLOSED when a quote never closes.
 */
function pairsAt(cursor: FieldCursor): Element | typeof UNCLOSED {
  const pairs = new Map<string, string>();
  for (;;) {
    cursor.skipOws();
    const name = cursor.token().toLowerCase();
    if (name === '' || !cursor.at('=')) return undefined;
    cursor.i++;
    const quotedValue = cursor.at('"');
    const value = valueAt(cursor);
    if (value === UNCLOSED) return UNCLOSED;
    // §4: a parameter MUST NOT occur more than once in an element.
    if ((value === '' && !quotedValue) || pairs.has(name)) return undefined;
    pairs.set(name, value);
    cursor.skipOws();
    if (cursor.atEnd || cursor.at(',')) return pairs;
    if (!cursor.at(';')) return undefined;
    cursor.i++;
  }
}

/**
 * RFC 7239 §4 `Forwarded`, parsed left to right by its grammar: elements separated by commas,
 * pairs by semicolons, a value a token or a quoted-string (RFC 9110 §5.6.4). A malformed element
 * is undefined; a quoted-string that never closes (RFC 9110 §5.6.4 requires the closing DQUOTE)
 * makes everything from its element on one malformed element, since where the client's text ends
 * can no longer be told. Empty list elements are ignored (RFC 9110 §5.6.1.2).
 */
function parseElements(text: string): Element[] {
  const elements: Element[] = [];
  const cursor = new FieldCursor(text);
  for (;;) {
    cursor.skipOws();
    if (cursor.atEnd) return elements;
    if (cursor.at(',')) {
      cursor.i++;
      continue;
    }
    const element = pairsAt(cursor);
    if (element === UNCLOSED || (element === undefined && !cursor.skipToComma())) {
      elements.push(undefined);
      return elements;
    }
    elements.push(element);
    cursor.i++; // the comma, or past the end
  }
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
