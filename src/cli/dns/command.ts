// `netdiag dns`: one name and type resolved by the deployment (/v1/dns/resolve), its answers as dig shows them.
import { answerText } from '../../common/answer-text.js';
import type { Schemas } from '../../generated/openapi-types.js';
import type { Client } from '../api/client.js';
import { print, printJson, table, type Output } from '../terminal/output.js';
import { terminalText } from '../terminal/terminal-text.js';

/** `netdiag dns`'s exit status for an answer that says the name does not exist (NXDOMAIN, RFC 1035 §4.1.1 RCODE 3). */
const NXDOMAIN_EXIT = 3;

/** Why an answer has no records, in words, by its response code. */
function noRecords(d: Schemas['DnsData']): string {
  switch (d.response_code) {
    case 'no_error':
      return `no records: ${d.query.name} exists but has no ${d.query.type} records`;
    case 'name_error':
      return `no records: ${d.query.name} does not exist (NXDOMAIN)`;
    default:
      return `no records: the resolver answered ${d.response_code}`;
  }
}

/**
 * `netdiag dns`: the answer, and its exit status (docs/command-line.md): 0 an answer (with records
 * or none), NXDOMAIN_EXIT when the name does not exist, 1 when the resolver failed (refused,
 * server_failure, other), as when the API did.
 */
export async function dnsCommand(client: Client, out: Output, name: string, type: string): Promise<number> {
  const query = `name=${encodeURIComponent(name)}&type=${encodeURIComponent(type.toUpperCase())}`;
  const d = await client.get<Schemas['DnsData']>(`/v1/dns/resolve?${query}`);
  const exit = d.response_code === 'no_error' ? 0 : d.response_code === 'name_error' ? NXDOMAIN_EXIT : 1;
  if (out.json) {
    printJson(d);
    return exit;
  }
  print(terminalText(`${d.query.name} ${d.query.type}: ${d.response_code}`));
  if (d.answers.length > 0) print(table(out, [['NAME', 'TYPE', 'TTL', 'DATA'], ...d.answers.map((a) => [a.name, a.type, String(a.ttl_seconds), answerText(a)])]));
  else print(terminalText(noRecords(d)));
  return exit;
}
