// `influxdb:` read at start (docs/monitor.md, "InfluxDB"): 1.x by its database, 2.x by org, bucket
// and token; a mix, a missing setting, credentials in the URL and an unknown key refused, each
// naming the file's line and the field.
import { describe, expect, it } from 'vitest';
import { MonitorConfigError, parseMonitorConfig } from '../monitor-config.js';

const HEAD = 'servers: [https://netdiag.example.net]\nchecks:\n  - name: x\n    run: rpm\n    every: 1h\ninfluxdb:\n';
const parse = (section: string) => parseMonitorConfig(HEAD + section, 'monitor.yaml', '/data/monitor.db').influxdb;
const fault = (section: string): string => {
  try {
    parse(section);
  } catch (err) {
    if (err instanceof MonitorConfigError) return err.message;
    throw err;
  }
  throw new Error('no fault found');
};

describe('influxdb: in the configuration', () => {
  it('reads 1.x (database, retention policy, username and password) and 2.x (org, bucket, token)', () => {
    expect(parse('  url: http://influxdb.lan:8086/\n  database: netdiag\n  retention_policy: a_year\n  username: monitor\n  password: "p@ss word"\n')).toEqual({ version: 1, url: 'http://influxdb.lan:8086', database: 'netdiag', retentionPolicy: 'a_year', username: 'monitor', password: 'p@ss word' });
    expect(parse('  url: https://influx.lan/proxy/\n  database: netdiag\n')).toEqual({ version: 1, url: 'https://influx.lan/proxy', database: 'netdiag', retentionPolicy: null, username: null, password: null });
    expect(parse('  url: https://influx.lan:8086\n  org: home\n  bucket: netdiag\n  token: abc==\n')).toEqual({ version: 2, url: 'https://influx.lan:8086', org: 'home', bucket: 'netdiag', token: 'abc==' });
  });

  it('refuses a mix of 1.x and 2.x settings, naming both', () => {
    expect(fault('  url: http://influxdb.lan:8086\n  database: netdiag\n  token: abc\n')).toBe('monitor.yaml:9: influxdb.token: database (InfluxDB 1.x) and token (2.x) are mixed: give database (and username, password, retention_policy) for 1.x, or org, bucket and token for 2.x');
  });

  it('names what is missing', () => {
    expect(fault('  url: http://influxdb.lan:8086\n')).toBe('monitor.yaml:7: influxdb: database missing: give database (InfluxDB 1.x) or org, bucket and token (2.x)');
    expect(fault('  url: http://influxdb.lan:8086\n  org: home\n  token: abc\n')).toBe('monitor.yaml:7: influxdb: InfluxDB 2.x needs org, bucket and token: bucket missing');
    expect(fault('  url: http://influxdb.lan:8086\n  database: netdiag\n  username: monitor\n')).toBe('monitor.yaml:9: influxdb.username: given without password: InfluxDB 1.x takes both or neither');
    expect(fault('  database: netdiag\n')).toBe('monitor.yaml:7: influxdb.url: missing');
  });

  it('refuses credentials in the URL, a URL that is not http(s), and a key it does not know', () => {
    expect(fault('  url: http://me:secret@influxdb.lan:8086\n  database: netdiag\n')).toBe('monitor.yaml:7: influxdb.url: carries credentials: give them as username and password (1.x) or token (2.x), which are never logged');
    expect(fault('  url: udp://influxdb.lan:8089\n  database: netdiag\n')).toBe('monitor.yaml:7: influxdb.url: "udp://influxdb.lan:8089" is not an http:// or https:// URL');
    expect(fault('  url: http://influxdb.lan:8086\n  db: netdiag\n')).toBe('monitor.yaml:8: influxdb.db: not a setting here (url, database, retention_policy, username, password, org, bucket, token)');
  });
});
