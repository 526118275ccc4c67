/**
 * Forwarding headers, read as lists of hop addresses in order client → nearest proxy.
 * An entry that is not an address (`unknown`, an obfuscated `_name`, garbage) is kept as
 * undefined, because it breaks the chain: we cannot know who stands behind it.
 */

/** Strips a port and brackets: `[2001:db8::1]:443` → `2001:db8::1`, `192.0.2.1:80` → `192.0.2.1`. */
function hostOf(node: string): string {
  if (node.startsWith('[')) {
    const end = node.indexOf(']');
    return end === -1 ? node : node.slice(1, end);
  }
  const colon = node.indexOf(':');
  // One colon: IPv4 with a port. More: a bare IPv6 address (X-Forwarded-For writes them so).
  if (colon !== -1 && node.indexOf(':', colon + 1) === -1) return node.slice(0, colon);
  return node;
}

/** Splits on a separator outside double quotes (RFC 7230 quoted-string). */
function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charAt(i);
    if (quoted && ch === '\\' && i + 1 < text.length) {
      current += text.charAt(i + 1);
      i++;
    } else if (ch === '"') {
      quoted = !quoted;
    } else if (!quoted && ch === separator) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts;
}

/** RFC 7239 `Forwarded`: the `for=` node of each element; elements without one break the chain. */
export function forwardedChain(header: string): (string | undefined)[] {
  return splitOutsideQuotes(header, ',').map((element) => {
    for (const pair of splitOutsideQuotes(element, ';')) {
      const eq = pair.indexOf('=');
      if (eq === -1) continue;
      if (pair.slice(0, eq).trim().toLowerCase() !== 'for') continue;
      const node = pair.slice(eq + 1).trim();
      return node === '' ? undefined : hostOf(node);
    }
    return undefined;
  });
}

/** `X-Forwarded-For: client, proxy1, proxy2`. */
export function xForwardedForChain(header: string): (string | undefined)[] {
  return header.split(',').map((entry) => {
    const node = entry.trim();
    return node === '' ? undefined : hostOf(node);
  });
}
