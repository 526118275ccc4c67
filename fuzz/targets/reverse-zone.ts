// Fuzz target: a question's name as /v1/dns/resolve reads it for the special-use rule (issue 69):
// the name made canonical (canonicalName; for PTR, the address's reverse name, reverseName),
// then the block of addresses whose reverse zone holds it (reverseBlockOf) and whether that block
// is wholly special-use (specialUseKindOfBlock). Its contract: only the `invalid_parameter`
// problem is thrown; a block is a prefix of 8-bit (in-addr.arpa) or 4-bit (ip6.arpa) steps whose
// labels end the name; a refused block's first and last addresses are special-use by the
// address table the rest of the service uses (isSpecialUse); and an address's own reverse name is
// refused exactly when that table calls the address special-use (IPv4-mapped read as its IPv4).
import ipaddr from 'ipaddr.js';
import { Problem } from '../../src/core/http/problems.js';
import { parseAddress } from '../../src/core/net/address.js';
import { reverseBlockOf, reverseNameOfText } from '../../src/core/net/reverse.js';
import { isSpecialUse, specialUseKindOfBlock } from '../../src/core/net/special.js';
import { canonicalName, reverseName } from '../../src/engines/dns/names.js';
import { check, outcome, total } from '../invariant.js';

const invalid = (err: unknown) => err instanceof Problem && err.code === 'invalid_parameter';

/** The last address of a block: its first with every bit past the prefix set. */
function lastOf(bytes: readonly number[], bits: number): number[] {
  return bytes.map((byte, i) => {
    const kept = Math.max(0, Math.min(8, bits - i * 8));
    return byte | (0xff >> kept);
  });
}

function checkBlock(name: string, raw: string): void {
  const block = total('reverse-zone/never-throws', () => reverseBlockOf(name));
  const where = () => `${JSON.stringify(raw)} read as ${name}: ${JSON.stringify(block)}`;
  const reverse = name === 'in-addr.arpa' || name.endsWith('.in-addr.arpa') || name === 'ip6.arpa' || name.endsWith('.ip6.arpa');
  check((block !== undefined) === reverse, 'reverse-zone/block-iff-reverse-name', where);
  if (block === undefined) return;
  const v4 = name.endsWith('in-addr.arpa');
  const step = v4 ? 8 : 4;
  check(block.bytes.length === (v4 ? 4 : 16) && block.bits % step === 0 && block.bits <= block.bytes.length * 8, 'reverse-zone/block-shape', where);
  check(block.bytes.every((byte, i) => byte === (byte & (0xff << (8 - Math.max(0, Math.min(8, block.bits - i * 8)))) & 0xff)), 'reverse-zone/zero-past-prefix', where);
  // The prefix's labels, written back, end the name.
  const labels = v4 ? block.bytes.slice(0, block.bits / 8).map(String) : block.bytes.flatMap((b) => [b >> 4, b & 15]).slice(0, block.bits / 4).map((n) => n.toString(16));
  const suffix = [...labels.reverse(), v4 ? 'in-addr' : 'ip6', 'arpa'].join('.');
  check(name === suffix || name.endsWith(`.${suffix}`), 'reverse-zone/labels-end-name', where);
  const kind = total('reverse-zone/never-throws', () => specialUseKindOfBlock(block));
  if (kind !== undefined) {
    for (const edge of [block.bytes, lastOf(block.bytes, block.bits)]) {
      const text = ipaddr.fromByteArray([...edge]).toString();
      const parsed = parseAddress(text);
      check(parsed !== undefined && isSpecialUse(parsed), 'reverse-zone/refused-block-is-special', () => `${where()}: ${text} is not special-use`);
    }
  }
}

export function fuzz(data: Buffer): void {
  const raw = data.toString('utf8');
  const asked = outcome('reverse-zone/only-invalid-parameter', () => canonicalName(raw), invalid);
  if (asked.ok) checkBlock(asked.value, raw);
  const ptr = outcome('reverse-zone/only-invalid-parameter', () => reverseName(raw), invalid);
  if (!ptr.ok) return;
  checkBlock(ptr.value, raw);
  // An address's own reverse name: refused exactly when the address is special-use.
  const address = parseAddress(raw);
  const block = reverseBlockOf(ptr.value);
  if (address === undefined || block === undefined || reverseNameOfText(raw) !== ptr.value) return;
  const refused = specialUseKindOfBlock(block) !== undefined;
  check(isSpecialUse(address) === refused, 'reverse-zone/address-rule', () => `${JSON.stringify(raw)} is ${isSpecialUse(address) ? '' : 'not '}special-use, and its reverse name was ${refused ? '' : 'not '}refused`);
}
