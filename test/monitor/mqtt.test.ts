// `netdiag monitor` with `mqtt:` (docs/monitor.md, "MQTT and Home Assistant") against Debian's
// mosquitto: with a password file, the broker holds Home Assistant's discovery config of each
// figure under one device and each check's retained state, which a subscriber arriving later reads
// with the unit its config names; the device is online while the monitor runs and offline after.
// Credentials the broker refuses are said (the password never) and tried again until it takes them.
// Over TLS the broker's certificate is checked against the CA file given, refused without it.
// Anonymous, with the broker stopped for two runs: both runs arrive once it is back, in order,
// to a subscriber whose persistent session the broker kept; a monitor killed leaves its last will.
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { connectAsync, type IClientOptions, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { everySecondSpeedConfig, startMonitor, until, type MonitorProcess } from '../support/monitor-process.js';
import { selfSignedCertificate } from '../support/doh-relay.js';
import { startMosquitto, type Mosquitto } from '../support/mosquitto.js';
import { LOOPBACK_TRANSFERS, startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

const ready = requireCommands('netdiag monitor to MQTT', ['mosquitto', 'mosquitto_passwd', 'openssl'], 'mosquitto openssl');

/** Each message a subscriber got, in order, with its retain flag. */
interface Got {
  topic: string;
  payload: string;
  retain: boolean;
}

/** A subscriber to `topics` on `url`; its messages collected as they come. */
async function subscriber(url: string, topics: string[], options: IClientOptions = {}): Promise<{ client: MqttClient; got: Got[] }> {
  const client = await connectAsync(url, { reconnectPeriod: 200, ...options });
  const got: Got[] = [];
  client.on('message', (topic, payload, packet) => got.push({ topic, payload: payload.toString(), retain: packet.retain }));
  await client.subscribeAsync(topics, { qos: 1 });
  return { client, got };
}

/** The last payload on `topic`, as JSON. */
const lastOn = (got: readonly Got[], topic: string): Record<string, unknown> | undefined => {
  const found = got.filter((g) => g.topic === topic).at(-1);
  return found === undefined ? undefined : (JSON.parse(found.payload) as Record<string, unknown>);
};

/** The speed test's figures as Home Assistant should see them: unit and device class (its sensor docs: data_rate takes Mbit/s, duration ms). */
const SPEED_FIGURES: Record<string, { unit?: string; deviceClass?: string }> = {
  download_mbps: { unit: 'Mbit/s', deviceClass: 'data_rate' },
  upload_mbps: { unit: 'Mbit/s', deviceClass: 'data_rate' },
  latency_ms: { unit: 'ms', deviceClass: 'duration' },
  jitter_ms: { unit: 'ms', deviceClass: 'duration' },
  download_loaded_latency_ms: { unit: 'ms', deviceClass: 'duration' },
  upload_loaded_latency_ms: { unit: 'ms', deviceClass: 'duration' },
  loaded_latency_increase_ms: { unit: 'ms', deviceClass: 'duration' },
  packet_loss_percent: { unit: '%' },
  bufferbloat_grade: { deviceClass: 'enum' },
};

describe.skipIf(!ready)('netdiag monitor to MQTT', () => {
  let server: TestServer;
  let dir: string;
  const open: { monitors: MonitorProcess[]; brokers: Mosquitto[]; clients: MqttClient[] } = { monitors: [], brokers: [], clients: [] };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netdiag-monitor-mqtt-'));
    server = await startTestServer({ NETDIAG_EVENTS_SINK: 'none', NETDIAG_RATE_LIMITS: 'speedtest=100000,ip=100000', ...LOOPBACK_TRANSFERS });
  });
  afterAll(async () => {
    for (const m of open.monitors) m.child.kill('SIGKILL');
    await Promise.all(open.clients.map((c) => c.endAsync(true)));
    await Promise.all(open.brokers.map((b) => b.close()));
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A monitor with `mqtt` as its section: a light speed test every second, or (`latency`) the quicker round trips. */
  function monitorWith(name: string, mqtt: readonly string[], latency = false): MonitorProcess {
    const config = everySecondSpeedConfig(join(dir, `${name}.yaml`), server.url, join(dir, `${name}.db`), [], []);
    if (latency) writeFileSync(config, [`servers: [${server.url}]`, `database: ${join(dir, `${name}.db`)}`, 'listen: off', 'checks:', '  - name: round trip', '    run: latency', '    cron: "* * * * * *"', '    spread: 0s', ''].join('\n'));
    writeFileSync(config, `${['mqtt:', ...mqtt.map((l) => `  ${l}`)].join('\n')}\n`, { flag: 'a' });
    const monitor = startMonitor(config);
    open.monitors.push(monitor);
    return monitor;
  }

  // Side by side: the first speed test takes most of the first case's time.
  it.concurrent('with a password: discovery configs under one device, retained states each figure read with its unit, online then offline', async () => {
    const broker = await startMosquitto({ user: { name: 'netdiag', password: 'broker-secret-42' } });
    open.brokers.push(broker);
    writeFileSync(join(dir, 'mqtt-password'), 'broker-secret-42\n');
    const monitor = monitorWith('password', [`url: ${broker.url}`, 'username: netdiag', `password_file: ${join(dir, 'mqtt-password')}`, 'id: lab_monitor', 'name: Lab monitor']);
    const auth = { username: 'netdiag', password: 'broker-secret-42' };
    const watcher = await subscriber(broker.url, ['netdiag/lab_monitor/status', 'netdiag/lab_monitor/+/+/state'], auth);
    open.clients.push(watcher.client);
    await until('a state published', () => watcher.got.some((g) => g.topic.endsWith('/state')), 15_000, monitor.lines);
    // A subscriber arriving now reads what the broker retained.
    const late = await subscriber(broker.url, ['homeassistant/#', 'netdiag/#'], auth);
    open.clients.push(late.client);
    await until('the retained state', () => late.got.some((g) => g.topic.endsWith('/state')), 5_000);

    const configs = late.got.filter((g) => g.topic.startsWith('homeassistant/'));
    expect(configs.every((g) => g.retain)).toBe(true);
    const byKey = new Map(configs.map((g) => [g.topic, JSON.parse(g.payload) as Record<string, unknown>]));
    const serverLevel = server.url.replace(/^http:\/\//, '').replace(/[^a-z0-9]+/g, '_');
    const sensors = [...Object.keys(SPEED_FIGURES), 'outcome', 'last_run'];
    expect([...byKey.keys()].sort()).toEqual(sensors.map((s) => `homeassistant/sensor/lab_monitor/line_speed_${serverLevel}_${s}/config`).sort());
    for (const [, config] of byKey) {
      expect(config.device).toMatchObject({ identifiers: ['lab_monitor'], name: 'Lab monitor' });
      expect(config).toMatchObject({ availability_topic: 'netdiag/lab_monitor/status', payload_available: 'online', payload_not_available: 'offline' });
    }
    expect(new Set([...byKey.values()].map((c) => c.unique_id)).size).toBe(sensors.length);

    for (const [figure, expected] of Object.entries(SPEED_FIGURES)) {
      const config = byKey.get(`homeassistant/sensor/lab_monitor/line_speed_${serverLevel}_${figure}/config`) ?? {};
      expect(config.device_class).toBe(expected.deviceClass);
      expect(config.unit_of_measurement).toBe(expected.unit);
      if (expected.unit !== undefined) expect(config.state_class).toBe('measurement');
      // The value as Home Assistant's template takes it from the retained state, with the state's own unit beside it.
      const field = /^\{\{ value_json\.([a-z_]+) \}\}$/.exec(String(config.value_template))?.[1] ?? '';
      const state = lastOn(late.got, String(config.state_topic));
      expect(late.got.find((g) => g.topic === config.state_topic)?.retain).toBe(true);
      expect(state).toHaveProperty(field);
      if (expected.unit !== undefined) {
        expect(typeof state?.[field] === 'number' || (figure === 'packet_loss_percent' && state?.[field] === null)).toBe(true);
        expect((state?.units as Record<string, string>)[field]).toBe(expected.unit);
      } else expect(['A+', 'A', 'B', 'C', 'D', 'F']).toContain(state?.[field]);
    }
    expect(typeof lastOn(late.got, `netdiag/lab_monitor/line_speed/${serverLevel}/state`)?.download_mbps).toBe('number');
    expect(lastOn(late.got, `netdiag/lab_monitor/line_speed/${serverLevel}/outcome`)).toMatchObject({ outcome: 'ok', check: 'line speed', reason: null });
    expect(watcher.got.map((g) => g.payload)).toContain('online');

    monitor.child.kill('SIGTERM');
    await once(monitor.child, 'exit');
    // The broker passes `offline` on once it has acknowledged it to the monitor, which may be after the monitor's exit.
    await until('offline', () => watcher.got.at(-1)?.topic === 'netdiag/lab_monitor/status' && watcher.got.at(-1)?.payload === 'offline', 2_000);
    expect(monitor.lines.join('\n')).not.toContain('broker-secret-42');
    // The broker let the monitor in by its password (mosquitto's log names the user of each connection).
    expect(broker.log()).toMatch(/New client connected from 127\.0\.0\.1:\d+ as lab_monitor .*u'netdiag'/);
  }, 20_000);

  it.concurrent('credentials the broker refuses: said without the password, asked again until the broker takes them, then the runs delivered', async () => {
    const broker = await startMosquitto({ user: { name: 'netdiag', password: 'the-right-one' } });
    open.brokers.push(broker);
    const runs = await subscriber(broker.url, ['netdiag/refused/+/+/runs'], { username: 'netdiag', password: 'the-right-one' });
    open.clients.push(runs.client);
    const monitor = monitorWith('refused', [`url: ${broker.url}`, 'username: monitor', 'password: not-yet-known', 'id: refused'], true);
    const refusal = `netdiag monitor: mqtt: cannot deliver (not connected to 127.0.0.1:${String(broker.port)}: Connection refused: Not authorized); the runs are kept in the history and tried again`;
    await until('the refusal said', () => monitor.lines.includes(refusal), 10_000, monitor.lines);
    expect(runs.got).toEqual([]);
    // The broker's operator adds the monitor's user; mosquitto reads its password file again.
    broker.setPassword('monitor', 'not-yet-known');
    await until('the runs delivered', () => runs.got.length >= 2, 10_000, monitor.lines);
    await until('delivering again said', () => monitor.lines.includes('netdiag monitor: mqtt: delivering again'), 2_000, monitor.lines);
    expect(monitor.lines.filter((l) => l.includes('cannot deliver'))).toEqual([refusal]);
    expect(monitor.lines.join('\n')).not.toContain('not-yet-known');
  }, 20_000);

  it.concurrent("mqtts://: the broker's certificate checked against tls.ca, refused without it (said), taken with verify: false", async () => {
    const certificate = selfSignedCertificate();
    const broker = await startMosquitto({ tls: certificate });
    open.brokers.push(broker);
    const runs = await subscriber(broker.url, ['netdiag/+/+/+/runs'], { ca: readFileSync(certificate.certFile) });
    open.clients.push(runs.client);
    const trusted = monitorWith('tls-ca', [`url: ${broker.url}`, 'id: tls_ca', `tls: { ca: ${certificate.certFile} }`], true);
    const unchecked = monitorWith('tls-unchecked', [`url: ${broker.url}`, 'id: tls_unchecked', 'tls: { verify: false }'], true);
    const untrusted = monitorWith('tls-untrusted', [`url: ${broker.url}`, 'id: tls_untrusted'], true);
    const from = (id: string) => runs.got.filter((g) => g.topic.startsWith(`netdiag/${id}/`)).length;
    await until('runs over TLS', () => from('tls_ca') >= 1 && from('tls_unchecked') >= 1, 10_000, trusted.lines);
    await until('the untrusted certificate said', () => untrusted.lines.some((l) => l.startsWith(`netdiag monitor: mqtt: cannot deliver (not connected to 127.0.0.1:${String(broker.port)}: self-signed certificate`)), 10_000, untrusted.lines);
    expect(from('tls_untrusted')).toBe(0);
    expect(unchecked.lines.filter((l) => l.includes('cannot deliver'))).toEqual([]);
  }, 20_000);

  it.concurrent('anonymous, the broker stopped for two runs: both arrive once it is back, in order; killed, the last will says offline', async () => {
    const broker = await startMosquitto();
    open.brokers.push(broker);
    const database = join(dir, 'outage.db');
    // A persistent session (clean: false): the broker keeps what comes for it while it is away, across its own restart.
    const runs = await subscriber(broker.url, ['netdiag/+/+/+/runs', 'netdiag/+/status'], { clientId: 'outage-watcher', clean: false });
    open.clients.push(runs.client);
    const monitor = monitorWith('outage', [`url: ${broker.url}`, 'id: outage'], true);
    const runIds = () => runs.got.filter((g) => g.topic.endsWith('/runs')).map((g) => (JSON.parse(g.payload) as { id: number }).id);
    await until('a run published', () => runIds().length >= 1, 10_000, monitor.lines);

    await broker.stop();
    const stoppedAt = Date.now();
    /** The runs the history holds that started after `since`. */
    const recordedSince = (since: number): number[] => {
      const history = new DatabaseSync(database, { readOnly: true });
      try {
        return (history.prepare('SELECT id FROM runs WHERE started_at > ? ORDER BY id').all(since) as { id: number }[]).map((r) => r.id);
      } finally {
        history.close();
      }
    };
    await until('two runs recorded with the broker down', () => recordedSince(stoppedAt).length >= 2, 10_000, monitor.lines);
    const whileDown = recordedSince(stoppedAt);
    await broker.start();
    await until('the runs recorded while the broker was down', () => whileDown.every((id) => runIds().includes(id)), 12_000, monitor.lines);
    // In order; QoS 1 is at least once, so a run may come twice in a row, never out of order.
    const ids = runIds();
    expect(ids.filter((id, i) => i === 0 || id !== ids[i - 1])).toEqual([...new Set(ids)].sort((a, b) => a - b));
    expect(monitor.lines.some((l) => l.startsWith('netdiag monitor: mqtt: cannot deliver'))).toBe(true);
    // Said once the delivery is acknowledged, which may be a moment after the subscriber has the runs.
    await until('delivering again said', () => monitor.lines.includes('netdiag monitor: mqtt: delivering again'), 2_000, monitor.lines);

    monitor.child.kill('SIGKILL');
    await until('the last will', () => runs.got.at(-1)?.payload === 'offline' && runs.got.at(-1)?.topic === 'netdiag/outage/status', 5_000);
  }, 30_000);
});
