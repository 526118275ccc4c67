// `mqtt:` as the monitor's configuration reads it: the defaults, a password from a file, TLS, and
// each fault named by its line and field with what is accepted.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MonitorConfigError, parseMonitorConfig } from '../monitor-config.js';

const HEAD = 'servers: [https://netdiag.example.net/]\nchecks:\n  - name: line speed\n    run: speedtest\n    every: 30m\nmqtt:\n';
const parse = (mqtt: string) => parseMonitorConfig(HEAD + mqtt, 'monitor.yaml', '/data/monitor.db').mqtt;
const fault = (mqtt: string): string => {
  try {
    parse(mqtt);
  } catch (err) {
    if (err instanceof MonitorConfigError) return err.message;
    throw err;
  }
  throw new Error('no fault found');
};

describe('mqtt: in the configuration', () => {
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-mqtt-settings-'));
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('takes a broker URL alone, with the topic prefix netdiag, discovery under homeassistant and this host as the device', () => {
    const host = hostname().toLowerCase().replace(/[^a-z0-9_-]+/g, '_');
    expect(parse('  url: mqtt://broker.lan\n')).toEqual({ url: 'mqtt://broker.lan', username: null, password: null, ca: null, verify: true, topicPrefix: 'netdiag', discoveryPrefix: 'homeassistant', id: `netdiag_${host}`, name: `netdiag monitor on ${hostname()}` });
  });

  it('reads the password from the first line of password_file, the CA file for mqtts://, and discovery off', () => {
    writeFileSync(join(dir, 'password'), 'from-the-file\nignored\n');
    writeFileSync(join(dir, 'ca.pem'), '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    const read = parse(`  url: mqtts://broker.lan:8884\n  username: netdiag\n  password_file: ${join(dir, 'password')}\n  tls: { ca: ${join(dir, 'ca.pem')}, verify: false }\n  topic_prefix: home/net\n  discovery_prefix: off\n  id: lab\n  name: Lab\n`);
    expect(read).toMatchObject({ url: 'mqtts://broker.lan:8884', username: 'netdiag', password: 'from-the-file', verify: false, topicPrefix: 'home/net', discoveryPrefix: null, id: 'lab', name: 'Lab' });
    expect(read?.ca).toContain('BEGIN CERTIFICATE');
  });

  it('refuses each bad value naming its line, its field and what is accepted, never echoing a password', () => {
    expect(fault('  url: http://broker.lan\n')).toBe('monitor.yaml:7: mqtt.url: http:// is not a broker\'s scheme (mqtt:// or mqtts://)');
    expect(fault('  url: mqtt://user:hunter2@broker.lan\n')).toBe('monitor.yaml:7: mqtt.url: carries credentials: give them as username and password (or password_file)');
    expect(fault('  url: mqtt://broker.lan/topic\n')).toBe('monitor.yaml:7: mqtt.url: must be only a scheme, a host and a port (topics are topic_prefix)');
    expect(fault('  url: mqtt://broker.lan\n  password: hunter2\n')).toBe('monitor.yaml:8: mqtt.password: a password needs a username');
    expect(fault('  url: mqtt://broker.lan\n  username: u\n  password: hunter2\n  password_file: /x\n')).toBe('monitor.yaml:10: mqtt.password_file: give password or password_file, not both');
    expect(fault(`  url: mqtt://broker.lan\n  username: u\n  password_file: ${join(dir, 'missing')}\n`)).toBe(`monitor.yaml:9: mqtt.password_file: cannot read ${join(dir, 'missing')}: ENOENT`);
    expect(fault('  url: mqtt://broker.lan\n  tls: { verify: false }\n')).toBe('monitor.yaml:8: mqtt.tls: is for an mqtts:// broker; this url is mqtt://');
    expect(fault('  url: mqtts://broker.lan\n  tls: { verify: "no" }\n')).toBe('monitor.yaml:8: mqtt.tls.verify: must be true or false, not "no"');
    expect(fault('  url: mqtts://broker.lan\n  tls: { cert: x }\n')).toBe('monitor.yaml:8: mqtt.tls.cert: not a setting here (ca, verify)');
    expect(fault('  url: mqtt://broker.lan\n  topic_prefix: net/#\n')).toBe('monitor.yaml:8: mqtt.topic_prefix: "net/#" is not usable in a topic (topic levels of letters, digits, _ and -, separated by /)');
    expect(fault('  url: mqtt://broker.lan\n  id: my monitor\n')).toBe('monitor.yaml:8: mqtt.id: "my monitor" is not usable in a topic (letters, digits, _ and -)');
    expect(fault('  url: mqtt://broker.lan\n  qos: 2\n')).toBe('monitor.yaml:8: mqtt.qos: not a setting here (url, username, password, password_file, tls, topic_prefix, discovery_prefix, id, name)');
    expect(fault('  username: u\n')).toBe('monitor.yaml:7: mqtt.url: missing');
  });
});

describe('checks and servers MQTT would publish as one', () => {
  const config = (servers: string, checks: readonly string[], mqtt = 'mqtt:\n  url: mqtt://broker.lan\n') => `servers: [${servers}]\nchecks:\n${checks.map((name) => `  - name: ${name}\n    run: speedtest\n    every: 30m\n`).join('')}${mqtt}`;
  const faultOf = (text: string): string => {
    try {
      parseMonitorConfig(text, 'monitor.yaml', '/data/monitor.db');
    } catch (err) {
      if (err instanceof MonitorConfigError) return err.message;
      throw err;
    }
    throw new Error('no fault found');
  };

  it('refuses two check names made the same topic level, at the second check, naming both', () => {
    // Line 6 is the second check's name: "Line speed" on line 3 and "line-speed" both become line_speed.
    expect(faultOf(config('https://netdiag.example.net', ['Line speed', 'line-speed']))).toBe(
      'monitor.yaml:6: checks[1].name: "line-speed" and checks[0] "Line speed" publish to the same MQTT topics and Home Assistant unique_ids (line_speed_netdiag_example_net), so each would overwrite the other\'s retained state and discovery configs: give the checks names that differ in more than case and punctuation',
    );
  });

  it('refuses one host over http and https, at the second server, naming both', () => {
    expect(faultOf(config('http://netdiag.lan, https://netdiag.lan', ['line speed']))).toMatch(
      /^monitor\.yaml:1: servers\[1\]: "https:\/\/netdiag\.lan" and servers\[0\] "http:\/\/netdiag\.lan" publish to the same MQTT topics and Home Assistant unique_ids \(line_speed_netdiag_lan\), .*name the server once$/,
    );
  });

  it('takes the same names without mqtt:, and names that differ in letters with it', () => {
    expect(() => parseMonitorConfig(config('http://netdiag.lan, https://netdiag.lan', ['Line speed', 'line-speed'], ''), 'monitor.yaml', '/data/monitor.db')).not.toThrow();
    expect(() => parseMonitorConfig(config('http://netdiag.lan, https://other.lan', ['line speed', 'line speed 2']), 'monitor.yaml', '/data/monitor.db')).not.toThrow();
  });
});
