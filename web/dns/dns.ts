// "DNS lookup": a name and type asked of this server's resolver (/v1/dns/resolve), its answers as
// a view (the status line and the table's rows, pure and unit-tested) and one render of them.
import { answerText } from '../../src/common/answer-text.js';
import { DNS_TYPES } from '../../src/common/dns-types.js';
import type { Schemas } from '../../src/generated/openapi-types.js';
import { $, api, option, problemText, text } from '../ui/dom.js';
import { num, t } from '../i18n/locale.js';

type DnsData = Schemas['DnsData'];

/** What the section shows of an answer: the line above the table, and a row per record. */
export function dnsView(data: DnsData): { status: string; rows: string[][] } {
  const code = data.response_code.replace('_', ' ');
  const count = data.answers.length;
  return {
    status: count === 1 ? t('dns.answers-one', { code }) : t('dns.answers-many', { count: num(count), code }),
    rows: data.answers.map((a) => [a.name, a.type, answerText(a), num(a.ttl_seconds)]),
  };
}

function render(view: { status: string; rows: string[][] } | { problem: string }): void {
  const table = $<HTMLTableElement>('#dns-answers');
  const error = $('#dns-error');
  if ('problem' in view) {
    text('#dns-status', '');
    error.textContent = view.problem;
    error.hidden = false;
    return;
  }
  text('#dns-status', view.status);
  table.tBodies[0]?.replaceChildren(
    ...view.rows.map((cells) => {
      const row = document.createElement('tr');
      for (const cell of cells) {
        const td = document.createElement('td');
        td.textContent = cell;
        row.append(td);
      }
      return row;
    }),
  );
  table.hidden = view.rows.length === 0;
}

export function setUpDns(): void {
  // The record types from the one list (src/common/dns-types.ts), A first and chosen.
  $<HTMLSelectElement>('#dns-type').replaceChildren(...DNS_TYPES.map((type) => option(type, type)));
  $<HTMLFormElement>('#dns-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const name = $<HTMLInputElement>('#dns-name').value.trim();
    const type = $<HTMLSelectElement>('#dns-type').value;
    $('#dns-error').hidden = true;
    $('#dns-answers').hidden = true;
    text('#dns-status', t('dns.looking-up', { name, type }));
    void api<DnsData>(`/v1/dns/resolve?name=${encodeURIComponent(name)}&type=${encodeURIComponent(type)}`).then((res) => {
      render(res.ok ? dnsView(res.data) : { problem: problemText(res.problem) });
    });
  });
}
