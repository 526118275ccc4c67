// A random UUID for the page's analytics events (event_id, the API contract), built from
// crypto.getRandomValues. Not crypto.randomUUID(): Web Crypto marks it [SecureContext], so
// browsers offer it only over HTTPS or on localhost, and a self-hosted server reached over plain
// HTTP by its LAN address is neither: the speed test died on Start there.
// getRandomValues is offered in every context.

/** Fills `bytes` with random values; crypto.getRandomValues unless a test passes its own. */
export type RandomFill = (bytes: Uint8Array) => unknown;

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** A version 4 (random) UUID in its lowercase 8-4-4-4-12 form (RFC 9562 §4, §5.4). */
export function uuidV4(fill: RandomFill = (bytes) => crypto.getRandomValues(bytes)): string {
  const b = new Uint8Array(16);
  fill(b);
  // RFC 9562 §5.4: the version (0b0100) in the high nibble of octet 6, and the variant (0b10,
  // §4.1) in the top two bits of octet 8; the other 122 bits stay random.
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x40;
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  const h = Array.from(b, (byte) => HEX[byte] ?? '');
  return `${h.slice(0, 4).join('')}-${h.slice(4, 6).join('')}-${h.slice(6, 8).join('')}-${h.slice(8, 10).join('')}-${h.slice(10, 16).join('')}`;
}
