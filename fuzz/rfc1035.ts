// A second reading of a DNS message, written from RFC 1035 alone, for the DNS target to hold
// decodeResponse's answers against: the question, then each answer record taken as long as its
// own RDLENGTH says (§4.1.3), whatever its type. It shares no code with src/engines/dns/, so a
// disagreement is a finding in one of the two readings.

/** A name as its labels' octets, and the offset just past it where it is written (§4.1.4). */
export interface WireName {
  labels: Uint8Array[];
  end: number;
}

export interface WireRecord {
  owner: WireName;
  type: number;
  ttl: number;
  /** Where the RDATA starts in the message, and its RDLENGTH octets. */
  rdataAt: number;
  rdata: Uint8Array;
}

const u16 = (m: Uint8Array, at: number): number => ((m[at] ?? 0) << 8) | (m[at + 1] ?? 0);
const u32 = (m: Uint8Array, at: number): number => u16(m, at) * 0x10000 + u16(m, at + 2);

/**
 * The name at `at`: labels of 1-63 octets, at most 255 octets in all (§3.1, §2.3.4), and
 * compression pointers that lead to a prior occurrence (§4.1.4), so to an offset before the
 * labels being read. Undefined when the octets are no such name.
 */
export function readName(m: Uint8Array, at: number): WireName | undefined {
  const labels: Uint8Array[] = [];
  let end: number | undefined;
  let octets = 1;
  let floor = at;
  for (;;) {
    const length = m[at];
    if (length === undefined) return undefined;
    if (length === 0) return { labels, end: end ?? at + 1 };
    if (length >= 0xc0) {
      if (at + 1 >= m.length) return undefined;
      const target = u16(m, at) & 0x3fff;
      if (target >= floor) return undefined;
      end ??= at + 2;
      at = floor = target;
      continue;
    }
    // 0x40-0xbf: the label types RFC 6891 §5 retired; none is a name.
    if (length > 63) return undefined;
    octets += length + 1;
    if (octets > 255 || at + 1 + length > m.length) return undefined;
    labels.push(m.subarray(at + 1, at + 1 + length));
    at += 1 + length;
  }
}

/** `count` resource records from `at` (§4.1.3), and where they end; undefined when they do not parse. */
function readRecords(m: Uint8Array, at: number, count: number): { records: WireRecord[]; end: number } | undefined {
  const records: WireRecord[] = [];
  for (let i = count; i > 0; i--) {
    const owner = readName(m, at);
    if (owner === undefined || owner.end + 10 > m.length) return undefined;
    const rdataAt = owner.end + 10;
    const rdlength = u16(m, owner.end + 8);
    if (rdataAt + rdlength > m.length) return undefined;
    records.push({ owner, type: u16(m, owner.end), ttl: u32(m, owner.end + 4), rdataAt, rdata: m.subarray(rdataAt, rdataAt + rdlength) });
    at = rdataAt + rdlength;
  }
  return { records, end: at };
}

/**
 * The one question's name and type, the answer section's records, and the authority section's
 * when they parse too (§4.1.1 header counts, §4.1.2 question, §4.1.3 resource records);
 * undefined when the message does not hold the question and answers.
 */
export function readMessage(m: Uint8Array): { question: { name: WireName; type: number }; answers: WireRecord[]; authorities: WireRecord[] | undefined } | undefined {
  if (m.length < 12 || u16(m, 4) !== 1) return undefined;
  const name = readName(m, 12);
  if (name === undefined || name.end + 4 > m.length) return undefined;
  const answers = readRecords(m, name.end + 4, u16(m, 6));
  if (answers === undefined) return undefined;
  const authorities = readRecords(m, answers.end, u16(m, 8));
  return { question: { name, type: u16(m, name.end) }, answers: answers.records, authorities: authorities?.records };
}

/** An SOA record's MINIMUM (§3.3.13: MNAME, RNAME, then five 32-bit fields, filling the RDATA); undefined when it is no such RDATA. */
export function soaMinimum(m: Uint8Array, record: WireRecord): number | undefined {
  const mname = readName(m, record.rdataAt);
  const rname = mname === undefined ? undefined : readName(m, mname.end);
  if (rname === undefined || rname.end + 20 !== record.rdataAt + record.rdata.length) return undefined;
  return u32(m, rname.end + 16);
}

/**
 * The labels a name in presentation form stands for (§5.1: `\DDD` is the octet DDD, `\X` is X,
 * an unescaped dot ends a label; '' is the root), or undefined when the text is no such name.
 */
export function presentationLabels(text: string): Uint8Array[] | undefined {
  if (text === '') return [];
  const labels: Uint8Array[] = [];
  let label: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2e) {
      labels.push(Uint8Array.from(label));
      label = [];
    } else if (c === 0x5c) {
      const digits = /^[0-9]{3}/.exec(text.slice(i + 1, i + 4))?.[0];
      if (digits !== undefined && Number(digits) <= 255) {
        label.push(Number(digits));
        i += 3;
      } else if (i + 1 < text.length && !/[0-9]/.test(text.charAt(i + 1))) {
        label.push(text.charCodeAt(++i));
      } else {
        return undefined;
      }
    } else {
      label.push(c);
    }
  }
  labels.push(Uint8Array.from(label));
  // Presentation form is ASCII (an octet past it is written \DDD), and every label holds an octet.
  return /^[\x21-\x7e]*$/.test(text) && labels.every((l) => l.length > 0) ? labels : undefined;
}

/** Octets equal but for the case of ASCII letters, as names compare (RFC 4343 §3). */
function sameOctetsIgnoringCase(a: Uint8Array, b: Uint8Array): boolean {
  const fold = (o: number) => (o >= 0x41 && o <= 0x5a ? o + 0x20 : o);
  return a.length === b.length && a.every((o, i) => fold(o) === fold(b[i] ?? -1));
}

export function sameName(a: readonly Uint8Array[], b: readonly Uint8Array[]): boolean {
  return a.length === b.length && a.every((label, i) => sameOctetsIgnoringCase(label, b[i] ?? new Uint8Array()));
}

/** TXT RDATA as its character-strings (§3.3.14, §3.3): a length octet then that many octets, filling the RDATA exactly. */
export function characterStrings(rdata: Uint8Array): Uint8Array[] | undefined {
  const strings: Uint8Array[] = [];
  for (let at = 0; at < rdata.length; ) {
    const length = rdata[at] ?? 0;
    if (at + 1 + length > rdata.length) return undefined;
    strings.push(rdata.subarray(at + 1, at + 1 + length));
    at += 1 + length;
  }
  return strings;
}
