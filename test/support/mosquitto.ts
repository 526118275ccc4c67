// Debian's mosquitto as the broker of the MQTT suites: on a free loopback port, in a folder of its
// own, anonymous or with a password file made by mosquitto_passwd, as the user running the suite
// (`user`: run as root it would otherwise drop to the mosquitto user, who cannot write the folder). It keeps its state on disk
// (persistence), so a stop and a start on the same port keep a persistent session's queued
// messages, as a broker restarted by its host does.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { stopChild } from './process.js';
import { freePort } from './wait.js';

export interface Mosquitto {
  /** mqtt://127.0.0.1:<port>, or mqtts:// */
  url: string;
  port: number;
  /** What it wrote to its log so far (connections, refusals). */
  log(): string;
  /** Stops it (SIGTERM: it writes its persistence file) and waits for its exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port, with the same state. */
  start(): Promise<void>;
  /** Gives `name` this password in its password file and has it read the file again (SIGHUP). */
  setPassword(name: string, password: string): void;
  /** Stops it, whatever state it is in, and removes its folder. */
  close(): Promise<void>;
}

/** Resolves once something accepts TCP connections on `port`, or rejects after `ms`. */
async function listening(port: number, ms: number): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => {
        resolve(false);
      });
    });
    if (ok) return;
    if (Date.now() > end) throw new Error(`mosquitto did not listen on 127.0.0.1:${String(port)} within ${String(ms)} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Starts mosquitto; with `user`, only that user and password are let in (mosquitto_passwd); with `tls`, over TLS with that certificate (mqtts://). */
export async function startMosquitto(options: { user?: { name: string; password: string }; tls?: { certFile: string; keyFile: string } } = {}): Promise<Mosquitto> {
  const { user, tls } = options;
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-mosquitto-'));
  const port = await freePort();
  const lines = [`listener ${String(port)} 127.0.0.1`, ...(tls === undefined ? [] : [`certfile ${tls.certFile}`, `keyfile ${tls.keyFile}`]), 'persistence true', `persistence_location ${dir}/`, `log_dest file ${join(dir, 'mosquitto.log')}`, 'log_type all', `user ${userInfo().username}`];
  const passwords = join(dir, 'passwords');
  if (user === undefined) lines.push('allow_anonymous true');
  else {
    execFileSync('mosquitto_passwd', ['-c', '-b', passwords, user.name, user.password], { stdio: 'ignore' });
    lines.push('allow_anonymous false', `password_file ${passwords}`);
  }
  const conf = join(dir, 'mosquitto.conf');
  writeFileSync(conf, `${lines.join('\n')}\n`);
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn('mosquitto', ['-c', conf], { stdio: 'ignore' });
    await listening(port, 5_000);
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    await stopChild(running);
  };
  await start();
  return {
    url: `${tls === undefined ? 'mqtt' : 'mqtts'}://127.0.0.1:${String(port)}`,
    port,
    log: () => {
      try {
        return readFileSync(join(dir, 'mosquitto.log'), 'utf8');
      } catch {
        return '';
      }
    },
    stop,
    start,
    setPassword: (name, password) => {
      execFileSync('mosquitto_passwd', ['-b', passwords, name, password], { stdio: 'ignore' });
      child?.kill('SIGHUP');
    },
    close: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
