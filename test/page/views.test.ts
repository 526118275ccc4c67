// The page's sections as views, without a browser: what "Your connection", the DNS lookup, the
// regional latency and a history row show for given data (web/connection/connection.ts, dns.ts, regions.ts,
// history-view.ts). In English, as the page is outside a browser; and in German, with the root
// element's language set as the page sets it, to see numbers written the German way.
import { afterEach, describe, expect, it } from 'vitest';
import { connectionView, type IpData } from '../../web/connection/connection.js';
import { dnsView } from '../../web/dns/dns.js';
import { resultRowView } from '../../web/results/history-view.js';
import { addCatalogue } from '../../web/i18n/locale.js';
import { regionsView } from '../../web/latency/regions.js';
import { catalogue } from '../support/catalogues.js';

const caller: IpData = {
  address: '192.0.2.10',
  ip_version: 'ipv4',
  reverse_hostname: null,
  network: { asn: 64500, organization: 'Example Net' },
  location: { city: 'Berlin', region: null, country: 'DE', country_name: 'Germany', latitude: null, longitude: null, timezone: null },
  connection: { http_protocol: 'HTTP/2', tls_version: null, provider_colo: null },
} as unknown as IpData;

/** The page's language, as web/i18n/page-text.ts sets it: its catalogue at hand, its code on the root element. */
function pageLanguage(code: string): void {
  addCatalogue(code, catalogue(code));
  (globalThis as { document?: unknown }).document = { documentElement: { lang: code } };
}

afterEach(() => {
  delete (globalThis as { document?: unknown }).document;
});

describe('your connection', () => {
  it('shows each field in words, the missing ones said as such', () => {
    expect(connectionView(caller)).toEqual({
      address: '192.0.2.10',
      fields: { ip_version: 'IPv4', reverse_hostname: 'none', network: 'AS64500, Example Net', location: 'Berlin, DE', edge: 'not reported', protocol: 'HTTP/2' },
    });
    const unknown = connectionView({ ...caller, network: { asn: null, organization: null }, location: { ...caller.location, city: null, country: null }, connection: { ...caller.connection, http_protocol: null } });
    expect(unknown.fields).toMatchObject({ network: 'unknown', location: 'unknown', protocol: 'not observed' });
  });
});

describe('the DNS lookup', () => {
  it('says how many answers came and lists each record with its data and TTL', () => {
    const view = dnsView({
      name: 'example.test',
      type: 'MX',
      response_code: 'NOERROR',
      answers: [{ name: 'example.test', type: 'MX', ttl_seconds: 86400, preference: 10, exchange: 'mail.example.test' }],
    } as never);
    expect(view.status).toBe('1 answer (NOERROR).');
    expect(view.rows).toEqual([['example.test', 'MX', '10 mail.example.test', '86,400']]);
    expect(dnsView({ name: 'x.test', type: 'A', response_code: 'NXDOMAIN', answers: [] } as never)).toEqual({ status: '0 answers (NXDOMAIN).', rows: [] });
  });
});

describe('the regional latency', () => {
  const region = (id: string, name: string) => ({ id, name, available: true }) as never;

  it('splits each bar into your round trip and the region\'s, against the longest, and says a failed probe', () => {
    const view = regionsView(
      [
        { region: region('weur', 'Western Europe'), edgeMs: 30, problem: undefined },
        { region: region('usea', 'US East'), edgeMs: undefined, problem: 'The probe timed out.' },
      ],
      10,
    );
    expect(view).toEqual([
      { id: 'weur', name: 'Western Europe', clientPercent: 25, edgePercent: 75, detail: 'you → server 10\u00a0ms, server → region 30\u00a0ms' },
      { id: 'usea', name: 'US East', clientPercent: 25, edgePercent: 0, detail: 'unavailable: The probe timed out.' },
    ]);
  });

  it('in German writes the decimal comma', () => {
    pageLanguage('de');
    const [only] = regionsView([{ region: region('weur', 'Westeuropa'), edgeMs: 2.5, problem: undefined }], undefined);
    expect(only?.detail).toMatch(/2,5\u00a0ms/);
  });
});

describe('a history row', () => {
  /** A cell as a person reads it: its units (the parts it may wrap between) joined by their separator. */
  const text = (cell: string | { units: readonly string[]; separator: string } | undefined): string | undefined => (cell === undefined || typeof cell === 'string' ? cell : cell.units.join(cell.separator));
  const cells = (view: { cells: readonly (string | { units: readonly string[]; separator: string })[] }) => view.cells.map(text);
  const result = { at: Date.UTC(2026, 10, 25, 18, 0, 0), mode: 'full' as const, downloadBps: 95_000_000, uploadBps: 9_500_000, latencyMs: 12, loadedDownMs: 70, loadedUpMs: 40, rpm: 1_200 };

  it('shows the mode, the rates, idle and worse loaded latency, the grade those two give, and the responsiveness estimate', () => {
    const view = resultRowView(result);
    expect(cells(view).slice(1)).toEqual(['full', '95\u00a0Mbps', '9.50\u00a0Mbps', '12\u00a0ms', '70\u00a0ms', 'B', '1,200']);
    expect(cells(view)[0]).toMatch(/^11\/2[56]\/26, /);
    expect(view.deleteLabel).toMatch(/^Delete the result of .*2026/);
  });

  it('names the server, the streams and the family beside the mode when the result says them', () => {
    pageLanguage('en');
    expect(cells(resultRowView({ ...result, server: 'fra', streams: 1, family: 'ipv6' }))[1]).toBe('full, server fra, 1 stream, IPv6');
    expect(cells(resultRowView({ ...result, streams: 4 }))[1]).toBe('full, 4 streams');
  });

  it('in German: the mode\'s German name and the decimal comma', () => {
    pageLanguage('de');
    const view = resultRowView({ ...result, latencyMs: undefined, loadedDownMs: undefined, loadedUpMs: undefined, rpm: undefined });
    expect(cells(view).slice(1)).toEqual(['vollständig', '95\u00a0Mbit/s', '9,50\u00a0Mbit/s', '–', '–', '–', '–']);
  });
});
