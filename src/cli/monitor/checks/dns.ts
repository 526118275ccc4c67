// The dns check: `netdiag dns NAME TYPE --json`, read down to its response code and its answers as
// `netdiag dns` shows them, so `answers: unchanged` compares what a person would read.
import { answerText } from '../../../common/answer-text.js';
import { DNS_TYPES, type DnsAnswer, type DnsType } from '../../../common/dns-types.js';
import { objectOf, type CheckKind } from './check-kind.js';

export interface DnsSettings {
  query: string;
  type: DnsType;
}

/** The API's response codes (openapi.yaml, DnsData.response_code). */
const RESPONSE_CODES = ['no_error', 'name_error', 'refused', 'server_failure', 'other'];

/** A query's name or address (for PTR): no spaces, and never read as an option. */
const QUERY = /^[^\s-][^\s]{0,252}$/;

export const dnsCheck: CheckKind<DnsSettings> = {
  keys: ['query', 'type'],
  settings: (read) => {
    if (!read.has('query')) read.fail(undefined, 'a dns check names what it resolves: query: example.net (and type: A, the default)');
    const query = read.text('query');
    if (!QUERY.test(query)) read.fail('query', `"${query}" is not a name or an address to resolve`);
    if (!read.has('type')) return { query, type: 'A' };
    const text = read.text('type').toUpperCase();
    const type = DNS_TYPES.find((t) => t === text);
    return type === undefined ? read.fail('type', `"${text}" is not a record type netdiag resolves (${DNS_TYPES.join(', ')})`) : { query, type };
  },
  // After `--`, the name is never read as an option, whatever it starts with.
  args: ({ query, type }, server) => ['dns', '--json', '--url', server, '--', query, type],
  figures: [
    { name: 'response_code', kind: 'text', values: RESPONSE_CODES },
    // The answers' data, sorted and joined with ", " ("192.0.2.1, 192.0.2.2").
    { name: 'answers', kind: 'text', values: null },
    { name: 'answer_count', kind: 'number', unit: 'answers' },
  ],
  figuresOf: (json) => {
    const answers = Array.isArray(json.answers) ? json.answers.map(objectOf) : [];
    // As `netdiag dns` shows each answer; a type this netdiag does not know shows empty.
    const data = answers.map((a) => (answerText(a as unknown as DnsAnswer) as string | undefined) ?? '').sort();
    return { response_code: typeof json.response_code === 'string' ? json.response_code : null, answers: data.join(', '), answer_count: answers.length };
  },
  // It exits 3 for NXDOMAIN and 1 for a resolver's refusal or failure with the answer printed all
  // the same (docs/command-line.md): its response_code is a figure a check expects.
  answeredDespiteExit: (json) => typeof json.response_code === 'string',
};
