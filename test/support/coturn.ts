// Debian's coturn, configured as docs/operations.md ("A TURN server for packet loss") says: the
// turnserver.conf block of that section is read from the document itself and run as it is
// written, with only the lab's addresses, ports, paths and secret put in (`labConfig`), so the
// documented configuration and the tested one cannot drift apart. The section's firewall (nft
// ruleset and sysctl) is read the same way (`documentedFirewall`).
//
// Two labs: loopback (the relay address 127.0.0.2, allowed as the documented relay address is,
// with `allow-loopback-peers` because on loopback every address is a loopback one), and a
// network namespace holding the documented addresses themselves (test/support/turn-lab.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './wait.js';

const OPERATIONS_MD = new URL('../../docs/operations.md', import.meta.url);
const SECTION = '## A TURN server for packet loss';

/** The section's fenced blocks of one info string (`ini`, `nft`, `conf`), in order. */
function documentedBlocks(info: string): string[] {
  const text = readFileSync(OPERATIONS_MD, 'utf8');
  const start = text.indexOf(`\n${SECTION}\n`);
  if (start === -1) throw new Error(`docs/operations.md has no section "${SECTION}"`);
  const next = text.indexOf('\n## ', start + SECTION.length + 2);
  const section = text.slice(start, next === -1 ? undefined : next);
  const blocks: string[] = [];
  const fence = new RegExp(`^\`\`\`${info}\\n([\\s\\S]*?)^\`\`\`$`, 'gm');
  for (const match of section.matchAll(fence)) blocks.push(match[1] ?? '');
  return blocks;
}

function onlyBlock(info: string): string {
  const blocks = documentedBlocks(info);
  if (blocks.length !== 1) throw new Error(`docs/operations.md "${SECTION}" must have one \`\`\`${info} block, has ${String(blocks.length)}`);
  return blocks[0] ?? '';
}

/** The documented turnserver.conf, line by line as written (comments and all). */
export function documentedTurnServerConf(): string[] {
  return onlyBlock('ini').replace(/\n$/, '').split('\n');
}

/** The documented value of a setting (the last line that sets it), or undefined. */
export function documentedSetting(name: string): string | undefined {
  let value: string | undefined;
  for (const line of documentedTurnServerConf()) {
    const [key, ...rest] = line.split('=');
    if (key === name) value = rest.join('=');
  }
  return value;
}

/** The documented firewall: the nft ruleset as written, and the sysctl settings. */
export function documentedFirewall(): { nft: string; sysctl: [string, string][] } {
  const sysctl: [string, string][] = [];
  for (const line of onlyBlock('conf').split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const [key = '', value = ''] = line.split('=').map((part) => part.trim());
    sysctl.push([key, value]);
  }
  return { nft: onlyBlock('nft'), sysctl };
}

/** Where a lab differs from the documented server. */
export interface TurnLab {
  /** Replaces the documented public address, which clients reach and peers may be (`listening-ip`). */
  listen: string;
  /** Replaces the documented relay address (`relay-ip`, and the one `allowed-peer-ip`). */
  relay: string;
  /** The relay port range, when the lab shares its ports with other tests. */
  ports?: { min: number; max: number };
  /** Settings only a lab needs, each from `LAB_ONLY`. */
  extra: string[];
}

/** What a lab may add: where it listens, where coturn writes, and the loopback exception. */
const LAB_ONLY = new Set(['listening-port', 'allow-loopback-peers', 'pidfile', 'userdb', 'log-file', 'simple-log']);

/**
 * The documented configuration with the lab's values put in, checking that each value it
 * replaces is there to be replaced: the public address, the relay address (which must be the
 * one address allowed as a peer), the port range and the secret placeholder.
 */
export function labConfig(lab: TurnLab, secret: string): string {
  const documented = documentedTurnServerConf();
  const listen = documentedSetting('listening-ip');
  const relay = documentedSetting('relay-ip');
  if (listen === undefined || relay === undefined) throw new Error('the documented configuration names no listening-ip or relay-ip');
  const allowed = documented.filter((line) => line.startsWith('allowed-peer-ip='));
  if (allowed.length !== 1 || allowed[0] !== `allowed-peer-ip=${relay}`) throw new Error(`the documented configuration must allow exactly its relay address as a peer, has ${JSON.stringify(allowed)}`);
  if (documentedSetting('static-auth-secret') !== '<NETDIAG_TURN_SECRET>') throw new Error('the documented static-auth-secret is not the placeholder');
  for (const line of lab.extra) {
    const key = line.split('=')[0] ?? '';
    if (!LAB_ONLY.has(key)) throw new Error(`a lab may not add "${key}" to the documented configuration`);
  }
  const replace: Record<string, string> = {
    'listening-ip': lab.listen,
    'relay-ip': lab.relay,
    'allowed-peer-ip': lab.relay,
    'static-auth-secret': secret,
    ...(lab.ports === undefined ? {} : { 'min-port': String(lab.ports.min), 'max-port': String(lab.ports.max) }),
  };
  const lines = documented.map((line) => {
    const key = line.split('=')[0] ?? '';
    return line.includes('=') && !line.startsWith('#') && key in replace ? `${key}=${replace[key] ?? ''}` : line;
  });
  return `${[...lines, ...lab.extra].join('\n')}\n`;
}

export interface Coturn {
  /** Where clients reach it. */
  host: string;
  port: number;
  url: string;
  secret: string;
  /** The relay address allocations are made on. */
  relay: string;
  /** argv running `command` where the server is (its network namespace), or as it is. */
  exec(command: string[]): string[];
  /** What coturn has logged so far. */
  log(): string;
  close(): Promise<void>;
}

/** Whether a STUN Binding request (RFC 8489 §6: no attributes) to the port is answered within 200 ms. */
async function answersBinding(host: string, port: number): Promise<boolean> {
  const socket = createSocket('udp4');
  const request = Buffer.alloc(20);
  request.writeUInt16BE(0x0001, 0);
  request.writeUInt32BE(0x2112a442, 4);
  randomBytes(12).copy(request, 8);
  try {
    const reply = once(socket, 'message') as Promise<[Buffer]>;
    socket.send(request, port, host);
    const timeout = new Promise<undefined>((resolve) => setTimeout(resolve, 200));
    const answer = await Promise.race([reply, timeout]);
    return answer !== undefined && answer[0].readUInt16BE(0) === 0x0101 && answer[0].subarray(8, 20).equals(request.subarray(8, 20));
  } finally {
    socket.close();
  }
}

export interface CoturnPlace {
  lab: Omit<TurnLab, 'extra'> & { extra?: string[] };
  /** The port clients reach; the documented default (3478) when not given. */
  port?: number;
  exec?: (command: string[]) => string[];
  /** Whether the server answers a Binding request yet (from where its clients are). */
  ready?: (host: string, port: number) => Promise<boolean>;
}

/** The loopback lab: 127.0.0.1 for clients, 127.0.0.2 for relayed addresses, ports of its own. */
async function loopback(): Promise<CoturnPlace> {
  const port = await freePort();
  // A relay port range of its own per server, inside the dynamic range.
  const min = 50_000 + (port % 100) * 100;
  return { lab: { listen: '127.0.0.1', relay: '127.0.0.2', ports: { min, max: min + 99 }, extra: [`listening-port=${String(port)}`, 'allow-loopback-peers'] }, port };
}

export async function startCoturn(secret: string, place?: CoturnPlace): Promise<Coturn> {
  const where = place ?? (await loopback());
  const exec = where.exec ?? ((command: string[]) => command);
  const port = where.port ?? 3478;
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-coturn-'));
  const extra = [...(where.lab.extra ?? []), `pidfile=${join(dir, 'turnserver.pid')}`, `userdb=${join(dir, 'turndb')}`, 'log-file=stdout', 'simple-log'];
  writeFileSync(join(dir, 'turnserver.conf'), labConfig({ ...where.lab, extra }, secret));
  const [command = '', ...args] = exec(['turnserver', '-c', join(dir, 'turnserver.conf')]);
  const child: ChildProcess = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const ready = where.ready ?? answersBinding;
  const deadline = Date.now() + 10_000;
  while (!(await ready(where.lab.listen, port))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`coturn did not start:\n${log}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    host: where.lab.listen,
    port,
    url: `turn:${where.lab.listen}:${String(port)}`,
    secret,
    relay: where.lab.relay,
    exec,
    log: () => log,
    close: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Lines in coturn's log that say a line of its configuration was not taken as written. */
export function configurationComplaints(log: string): string[] {
  return log.split('\n').filter((line) => /Bad configuration format|Unknown boolean|Wrong .* format|Cannot add|ERROR/i.test(line));
}

interface UclientResult {
  code: number;
  output: string;
}

/**
 * coturn's own test client with the given credentials, run where the server's clients are:
 * `-y` relays between two of its own allocations (what a loss test does), `peer` sends ten
 * 100-byte datagrams to that address instead. It starts sending 2-5 s after it starts and then
 * waits about 12 s for a silent peer's echoes, so `stop` may end it sooner: polled every 100 ms,
 * once it holds the client is given 300 ms more and stopped (the output is what it printed).
 */
export async function uclient(
  turn: Coturn,
  username: string,
  credential: string,
  peer?: { host: string; port: number },
  stop?: () => boolean,
): Promise<UclientResult> {
  const args = ['-p', String(turn.port), '-u', username, '-w', credential, '-n', '10', '-m', '1', '-l', '100', '-c'];
  if (peer === undefined) args.push('-y');
  else args.push('-e', peer.host, '-r', String(peer.port));
  args.push(turn.host);
  const [command = '', ...rest] = turn.exec(['turnutils_uclient', ...args]);
  const child = spawn(command, rest, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const poll = setInterval(() => {
    if (stop?.() === true) {
      clearInterval(poll);
      setTimeout(() => child.kill('SIGKILL'), 300);
    }
  }, 100);
  const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
  clearTimeout(deadline);
  clearInterval(poll);
  return { code: code ?? (signal === null ? -1 : 128), output };
}
