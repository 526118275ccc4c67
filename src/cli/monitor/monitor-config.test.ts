// The monitor's configuration file: a good one read whole; each fault named by its line and its
// field, so a person finds it in the file they wrote.
import { describe, expect, it } from 'vitest';
import { MonitorConfigError, parseDatabase, parseMonitorConfig } from './monitor-config.js';
import { REGION_IDS } from '../../common/regions.js';

const parse = (text: string) => parseMonitorConfig(text, 'monitor.yaml', '/data/monitor.db');
const fault = (text: string): string => {
  try {
    parse(text);
  } catch (err) {
    if (err instanceof MonitorConfigError) return err.message;
    throw err;
  }
  throw new Error('no fault found');
};

const GOOD = `servers: [https://netdiag.example.net/]
checks:
  - name: line speed
    run: speedtest
    mode: light
    every: 30m
    expect: { download_mbps: ">= 70% of 500", upload_mbps: ">= 40", bufferbloat_grade: "<= B" }
    alert_after: 3
  - name: responsiveness
    run: rpm
    cron: "0 */2 * * *"
    spread: 90s
notify: ["json://localhost:8000/", "ntfy://ntfy.example/netdiag", "https://hooks.example/x"]
`;

describe("the monitor's configuration", () => {
  it('refuses a latency region that is not one of the seven, naming them', () => {
    const text = 'servers: [https://netdiag.example.net/]\nchecks:\n  - name: far away\n    run: latency\n    every: 5m\n    region: mars\n';
    expect(fault(text)).toBe(`monitor.yaml:6: checks[0].region: "mars" is not a region id (${REGION_IDS.join(', ')})`);
    expect(() => parse(text.replace('mars', 'apac-se'))).not.toThrow();
  });

  it('takes auto among the servers (the nearest of the first URL\'s list), a source address on a check, and streams on a speedtest check', () => {
    const c = parse(GOOD.replace('servers: [https://netdiag.example.net/]', 'servers: [https://netdiag.example.net/, auto]').replace('    mode: light\n', '    mode: light\n    streams: 1\n    source: 192.0.2.10\n'));
    expect(c.servers).toEqual(['https://netdiag.example.net', 'auto']);
    expect(c.checks[0]).toMatchObject({ settings: { mode: 'light', streams: 1 }, source: '192.0.2.10' });
    expect(c.checks[1]).toMatchObject({ source: null });
  });

  it('refuses auto with no URL to ask for the list, a source that is not an address or is on a families check, and streams out of range or on another kind, naming line and field', () => {
    expect(fault(GOOD.replace('servers: [https://netdiag.example.net/]', 'servers:\n  - auto'))).toBe("monitor.yaml:2: servers[0]: auto picks the nearest of the servers a deployment lists: name that deployment's URL in servers too (the first URL is the one asked)");
    expect(fault(GOOD.replace('    mode: light\n', '    mode: light\n    source: eth0\n'))).toBe('monitor.yaml:6: checks[0].source: "eth0" is not an IP address (192.0.2.10, 2001:db8::10): the local address the check\'s connections are sent from');
    expect(fault(`${GOOD.replace(/notify:.*\n/, '')}  - name: both\n    run: families\n    every: 10m\n    source: 192.0.2.10\n`)).toBe('monitor.yaml:16: checks[2].source: a families check asks over both families, and one source address has one: give source to another kind of check');
    expect(fault(GOOD.replace('    mode: light\n', '    mode: light\n    streams: 17\n'))).toBe('monitor.yaml:6: checks[0].streams: 17 is not a whole number of streams from 1 to 16 (1: a single stream)');
    expect(fault(GOOD.replace('    mode: light\n', '    mode: light\n    streams: "4"\n'))).toBe('monitor.yaml:6: checks[0].streams: "4" is not a whole number of streams from 1 to 16 (1: a single stream)');
    expect(fault(GOOD.replace('    spread: 90s\n', '    spread: 90s\n    streams: 2\n'))).toBe('monitor.yaml:13: checks[1].streams: only a speedtest check has a streams');
  });

  it('reads a good file whole: servers as origins, schedules, spreads, expectations, defaults', () => {
    const c = parse(GOOD);
    expect(c.servers).toEqual(['https://netdiag.example.net']);
    expect(c.database).toBe('/data/monitor.db');
    expect(c.notify).toHaveLength(3);
    expect(c.listen).toEqual({ host: '127.0.0.1', port: 9465 });
    expect(parse(`${GOOD}listen: "[::1]:9000"\n`).listen).toEqual({ host: '::1', port: 9000 });
    expect(parse(`${GOOD}listen: "off"\n`).listen).toBeNull();
    expect(c.hosts).toEqual([]);
    expect(parse(`${GOOD}hosts: [Monitor.Example.lan]\n`).hosts).toEqual(['monitor.example.lan']);
    const [speed, rpm] = c.checks;
    expect(speed).toMatchObject({ name: 'line speed', run: 'speedtest', settings: { mode: 'light' }, schedule: { kind: 'every', ms: 1_800_000 }, spreadMs: 180_000, alertAfter: 3 });
    // 70% of 500 is 350.
    expect(speed?.expect.map((e) => (e.kind === 'number' ? [e.figure, e.op, e.value] : [e.figure, e.text]))).toEqual([
      ['download_mbps', '>=', 350],
      ['upload_mbps', '>=', 40],
      ['bufferbloat_grade', '<= B'],
    ]);
    expect(rpm).toMatchObject({ run: 'rpm', schedule: { kind: 'cron', expression: '0 */2 * * *' }, spreadMs: 90_000, alertAfter: 3, expect: [] });
  });

  it.each([
    ['a tab in the YAML', 'servers: [http://a]\nchecks:\n\t- name: x\n', /^monitor\.yaml:3: not valid YAML: /],
    ['an unknown top-level key', `${GOOD}colour: red\n`, /^monitor\.yaml:14: colour: not a setting here \(servers, database, keep, listen, hosts, checks, notify, mqtt, influxdb, budget\)$/],
    ['a server that is not http(s)', GOOD.replace('https://netdiag.example.net/', 'ftp://x'), /^monitor\.yaml:1: servers\[0\]: "ftp:\/\/x" is not an http:\/\/ or https:\/\/ URL$/],
    ['a dns check without its query', GOOD.replace('run: rpm', 'run: dns'), /^monitor\.yaml:9: checks\[1\]: a dns check names what it resolves: query: example\.net/],
    ['a host that is no name', `${GOOD}hosts: ["evil.example/"]\n`, /^monitor\.yaml:14: hosts\[0\]: "evil\.example\/" is not a host name/],
    ['a query that would read as an option', GOOD.replace('run: rpm', 'run: dns\n    query: "--url=http://elsewhere"'), /^monitor\.yaml:11: checks\[1\]\.query: "--url=http:\/\/elsewhere" is not a name or an address to resolve$/],
    ['a query on a speed test', GOOD.replace('    mode: light\n', '    query: example.net\n'), /^monitor\.yaml:5: checks\[0\]\.query: only a dns check has a query$/],
    ['a record type netdiag does not resolve', GOOD.replace('run: rpm', 'run: dns\n    query: example.net\n    type: SRV'), /^monitor\.yaml:12: checks\[1\]\.type: "SRV" is not a record type netdiag resolves \(A, AAAA, CNAME, MX, NS, TXT, PTR\)$/],
    ['a family state that is not one', GOOD.replace('run: rpm', 'run: families\n    expect: { ipv6: "= up" }'), /^monitor\.yaml:11: checks\[1\]\.expect\.ipv6: "up" is not a value ipv6 takes/],
    ['a check kind the monitor does not run', GOOD.replace('run: rpm', 'run: ping'), /^monitor\.yaml:10: checks\[1\]\.run: "ping" is not a check this monitor runs \(speedtest, rpm, latency, dns, families\)$/],
    ['an interval without a unit', GOOD.replace('every: 30m', 'every: 30'), /^monitor\.yaml:6: checks\[0\]\.every: "30" is not an interval/],
    ['an interval under a minute', GOOD.replace('every: 30m', 'every: 20s'), /^monitor\.yaml:6: checks\[0\]\.every: the check "line speed" runs 20s apart, more often than once a minute, the least the monitor allows$/],
    ['a cron expression every five seconds', GOOD.replace('0 */2 * * *', '*/5 * * * * *'), /^monitor\.yaml:11: checks\[1\]\.cron: the check "responsiveness" would run more often than once a minute, the least the monitor allows: its seconds field \(the first of six\) is "\*\/5"; give five fields, or one second in the sixth \("0 \* \* \* \* \*"\)$/],
    ['a cron expression twice a minute', GOOD.replace('0 */2 * * *', '0,30 * * * * *'), /^monitor\.yaml:11: checks\[1\]\.cron: the check "responsiveness" would run more often than once a minute, .* is "0,30"; /],
    ['both every and cron', GOOD.replace('    cron: "0 */2 * * *"', '    cron: "0 */2 * * *"\n    every: 1h'), /^monitor\.yaml:9: checks\[1\]: give either every .* or cron/],
    ['a cron expression croner refuses', GOOD.replace('0 */2 * * *', '61 * * * *'), /^monitor\.yaml:11: checks\[1\]\.cron: "61 \* \* \* \*" is not a cron expression: /],
    ['a figure the check does not report', GOOD.replace('upload_mbps: ">= 40"', 'upload: ">= 40"'), /^monitor\.yaml:7: checks\[0\]\.expect\.upload: "upload" is not a figure a speedtest check reports/],
    ['a condition with no operator', GOOD.replace('">= 40"', '"40"'), /^monitor\.yaml:7: checks\[0\]\.expect\.upload_mbps: "40" is not a condition/],
    ['a grade that is not one', GOOD.replace('"<= B"', '"<= G"'), /^monitor\.yaml:7: checks\[0\]\.expect\.bufferbloat_grade: "G" is not a bufferbloat grade/],
    ['alert_after zero', GOOD.replace('alert_after: 3', 'alert_after: 0'), /^monitor\.yaml:8: checks\[0\]\.alert_after: 0 is not a whole number of breaches in a row from 1 to 1000$/],
    ['a spread as long as the interval', GOOD.replace('    alert_after: 3', '    spread: 30m\n    alert_after: 3'), /^monitor\.yaml:8: checks\[0\]\.spread: 30m is not shorter than the interval$/],
    ['two checks of one name', GOOD.replace('name: responsiveness', 'name: line speed'), /^monitor\.yaml:9: checks\[1\]\.name: "line speed" names another check too/],
    ['a notify target that is not a URL', GOOD.replace('"json://localhost:8000/"', '"alerts@example.net"'), /^monitor\.yaml:13: notify\[0\]: "alerts@example\.net" is not a URL/],
    ['no checks', 'servers: [http://a]\nchecks: []\n', /^monitor\.yaml:2: checks: name at least one check$/],
    ['no servers key', 'checks: []\n', /^monitor\.yaml:1: servers: missing$/],
    ['a listen that is not host:port', `${GOOD}listen: 9465\n`, /^monitor\.yaml:14: listen: must be text, not 9465$/],
    ['a listen with a port past 65535', `${GOOD}listen: "127.0.0.1:70000"\n`, /^monitor\.yaml:14: listen: "127\.0\.0\.1:70000" is not host:port/],
    ['a retention under a day', `${GOOD}keep: 12h\n`, /^monitor\.yaml:14: keep: "12h" is not a duration of a day or more/],
  ])('names the line and the field of %s', (_, text, message) => {
    expect(fault(text)).toMatch(message);
  });

  it('takes a six-field cron expression that names one second (once a minute at most), and a shorter schedule only when the floor is lowered', () => {
    expect(parse(GOOD.replace('0 */2 * * *', '30 */2 * * * *')).checks[1]?.schedule).toEqual({ kind: 'cron', expression: '30 */2 * * * *' });
    const everySecond = GOOD.replace('0 */2 * * *', '* * * * * *').replace('every: 30m', 'every: 2s').replace('spread: 90s', 'spread: 0s');
    expect(parseMonitorConfig(everySecond, 'monitor.yaml', '/data/monitor.db', 1000).checks.map((c) => c.schedule)).toEqual([
      { kind: 'every', ms: 2000 },
      { kind: 'cron', expression: '* * * * * *' },
    ]);
  });

  it('reads the database alone from a file whose other settings are at fault, but not from one that is not YAML', () => {
    const broken = GOOD.replace('run: rpm', 'run: ping');
    expect(parseDatabase(`${broken}database: /srv/monitor.db\n`, 'monitor.yaml', '/data/monitor.db')).toBe('/srv/monitor.db');
    expect(parseDatabase(broken, 'monitor.yaml', '/data/monitor.db')).toBe('/data/monitor.db');
    expect(() => parseDatabase('servers: [http://a]\n\t- x\n', 'monitor.yaml', '/data/monitor.db')).toThrow(/^monitor\.yaml:2: not valid YAML: /);
  });
});
