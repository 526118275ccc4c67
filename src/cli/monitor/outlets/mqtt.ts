// The MQTT outlet (docs/monitor.md, "MQTT and Home Assistant"): one connection to the broker,
// kept up by MQTT.js's client (imported only when `mqtt:` is configured; its own TCP or TLS
// socket, so the bundle leaves out MQTT.js's WebSocket and SOCKS transports), with `online` as its birth
// message and `offline` as its last will; on each connection the discovery configs are published
// again (a broker without persistence forgets retained ones), and again when Home Assistant says it
// started (its `<discovery_prefix>/status` birth message). Runs go out with QoS 1 (MQTT 3.1.1 §4.3.2:
// at least once; a message's `id` tells a repeat), and a delivery counts once the broker took
// every message (PUBACK): until then the runs stay in the history (outlet.ts).
import { connect as tcpConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { IClientOptions, MqttClient } from 'mqtt';
import type { MonitorConfig } from '../monitor-config.js';
import type { NumberedRun } from '../store.js';
import { discoveryMessages, runMessages, statusTopic, type Message } from './mqtt-messages.js';
import type { MqttSettings } from './mqtt-settings.js';
import type { Outlet } from './outlet.js';

/** How long a delivery waits for a connection under way before the runs are left for the outlet's next try. */
const CONNECT_WAIT_MS = 1_000;
/** Between MQTT.js's reconnection attempts while the broker is away. */
const RECONNECT_MS = 2_000;
/** How long the last messages (`offline`) may take at a stop before the connection is cut. */
const CLOSE_MS = 2_000;

/** The connection's options: credentials, TLS, and the last will the broker says for us when we vanish. */
function clientOptions(s: MqttSettings): IClientOptions {
  return {
    clientId: s.id,
    clean: true,
    reconnectPeriod: RECONNECT_MS,
    // A broker refusing the credentials goes on being asked: its password file may be fixed while the monitor runs.
    reconnectOnConnackError: true,
    connectTimeout: 10_000,
    ...(s.username === null ? {} : { username: s.username }),
    ...(s.password === null ? {} : { password: s.password }),
    will: { topic: statusTopic(s), payload: Buffer.from('offline'), qos: 1, retain: true },
  };
}

/** The broker as the log names it: host and port (credentials never are in the URL: mqtt-settings.ts). */
const brokerName = (s: MqttSettings): string => new URL(s.url).host;

/** A new socket to the broker for each (re)connection: TCP for mqtt:// (port 1883), TLS for mqtts:// (8883), checked against `ca` unless verify is false. */
function socketTo(s: MqttSettings, failed: (reason: string) => void): () => Socket {
  const url = new URL(s.url);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const secure = url.protocol === 'mqtts:';
  const port = Number(url.port === '' ? (secure ? 8883 : 1883) : url.port);
  return () => {
    const socket = secure ? tlsConnect({ host, port, ...(isIP(host) === 0 ? { servername: host } : {}), ...(s.ca === null ? {} : { ca: s.ca }), rejectUnauthorized: s.verify }) : tcpConnect({ host, port });
    // MQTT.js keeps a refused or reset connection to itself; the reason is what a failed delivery says.
    socket.on('error', (err: Error) => {
      failed(err.message);
    });
    return socket;
  };
}

async function publishAll(client: MqttClient, messages: readonly Message[]): Promise<void> {
  // Sent in this order on the one connection; the broker keeps a topic's order (MQTT 3.1.1 §4.6).
  await Promise.all(messages.map((m) => client.publishAsync(m.topic, m.payload, { qos: 1, retain: m.retain })));
}

/** Rejects when the connection drops before `work` ends: QoS 1 messages in flight would wait for the next connection. */
function unlessDropped<T>(client: MqttClient, work: Promise<T>, broker: string): Promise<T> {
  let onClose: (() => void) | undefined;
  const dropped = new Promise<never>((_, reject) => {
    onClose = () => {
      reject(new Error(`the connection to ${broker} dropped`));
    };
    client.once('close', onClose);
    // Dropped already (after `connected()` resolved, before this listener): that 'close' is gone, and the publishes wait in the offline queue.
    if (!client.connected) onClose();
  });
  return Promise.race([work, dropped]).finally(() => {
    if (onClose !== undefined) client.removeListener('close', onClose);
  });
}

/** Resolves once connected, or rejects with why not after CONNECT_WAIT_MS. */
function connected(client: MqttClient, broker: string, lastError: () => string | undefined): Promise<void> {
  if (client.connected) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      client.removeListener('connect', onConnect);
      reject(new Error(`not connected to ${broker}${lastError() === undefined ? '' : `: ${lastError() ?? ''}`}`));
    }, CONNECT_WAIT_MS);
    const onConnect = () => {
      clearTimeout(timer);
      resolve();
    };
    client.once('connect', onConnect);
  });
}

/**
 * MQTT.js's client class from its CommonJS module: Node (and esbuild's bundle, which follows it)
 * gives the module's exports as the default, and the class is their `default`.
 */
function clientClass(loaded: unknown): typeof MqttClient {
  const exported = (loaded as { default: unknown }).default;
  const inner = (exported as { default?: unknown }).default;
  return (typeof inner === 'function' ? inner : exported) as typeof MqttClient;
}

/** The outlet for `mqtt:`; it connects at once, so the device is `online` before the first run. */
export function mqttOutlet(s: MqttSettings, config: MonitorConfig, log: (line: string) => void): Outlet {
  const broker = brokerName(s);
  let lastError: string | undefined;
  let said = false;
  const announce = (client: MqttClient) => {
    void publishAll(client, [{ topic: statusTopic(s), payload: 'online', retain: true }, ...discoveryMessages(s, config)]).catch(() => undefined);
  };
  const ready: Promise<MqttClient> = import('mqtt/lib/client').then((loaded) => {
    const client = new (clientClass(loaded))(
      socketTo(s, (reason) => (lastError = reason)),
      clientOptions(s),
    );
    client.on('connect', () => {
      lastError = undefined;
      if (!said) log(`mqtt: connected to ${broker} as ${s.id}`);
      said = true;
      announce(client);
      if (s.discoveryPrefix !== null) client.subscribe(`${s.discoveryPrefix}/status`, { qos: 1 }, () => undefined);
    });
    // Home Assistant's birth message: it has just started and reads the configs anew.
    client.on('message', (topic, payload) => {
      if (topic === `${s.discoveryPrefix ?? ''}/status` && payload.toString() === 'online') announce(client);
    });
    // Said by the outlet's loop when a delivery fails (outlet.ts), not at each reconnection attempt.
    client.on('error', (err) => {
      lastError = err.message;
    });
    return client;
  });
  return {
    name: 'mqtt',
    deliver: async (runs: readonly NumberedRun[]) => {
      const client = await ready;
      await connected(client, broker, () => lastError);
      await unlessDropped(client, publishAll(client, runs.flatMap((run) => runMessages(s, config, run))), broker);
    },
    close: async () => {
      const client = await ready;
      if (client.connected) {
        // A clean stop sends no last will (MQTT 3.1.1 §3.1.2.5), so `offline` is said here.
        const offline = client.publishAsync(statusTopic(s), 'offline', { qos: 1, retain: true }).catch(() => undefined);
        await Promise.race([offline, new Promise((resolve) => setTimeout(resolve, CLOSE_MS).unref())]);
      }
      await client.endAsync(true);
    },
  };
}
