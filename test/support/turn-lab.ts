// A TURN host and "the internet" as two network namespaces joined by a veth pair, so the
// documented coturn configuration runs with the documented addresses themselves and the
// documented firewall can be loaded without touching this machine's own (iproute2, nft; needs
// root). The TURN host has 203.0.113.10 (its public and relay address) and 203.0.113.11 (another
// address of its own); the internet namespace has 198.51.100.7. Documentation ranges only, and
// nothing leaves the two namespaces. A small Node agent in each namespace binds UDP listeners
// there and counts what reaches them.
import { execFileSync, spawn, type ChildProcessByStdio } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { documentedFirewall, startCoturn, type Coturn } from './coturn.js';

export const TURN_HOST = '203.0.113.10';
export const TURN_HOST_OTHER = '203.0.113.11';
export const INTERNET_PEER = '198.51.100.7';

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });

/** Runs in a namespace: `{"op":"listen"|"binding", …}` lines in, one answer line each, and a line per datagram received. */
const AGENT = `
const dgram = require('node:dgram');
const crypto = require('node:crypto');
const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.op === 'listen') {
    const s = dgram.createSocket('udp4');
    s.on('message', (b, r) => out({ event: 'datagram', to: m.host + ':' + m.port, from: r.address + ':' + r.port, bytes: b.length }));
    s.on('error', (e) => out({ id: m.id, ok: false, error: String(e) }));
    s.bind(m.port, m.host, () => out({ id: m.id, ok: true }));
  } else if (m.op === 'binding') {
    const s = dgram.createSocket('udp4');
    const req = Buffer.alloc(20);
    req.writeUInt16BE(1, 0);
    req.writeUInt32BE(0x2112a442, 4);
    crypto.randomBytes(12).copy(req, 8);
    const t = setTimeout(() => { s.close(); out({ id: m.id, ok: false }); }, 200);
    s.on('message', (b) => {
      if (b.length >= 20 && b.readUInt16BE(0) === 0x0101 && b.subarray(8, 20).equals(req.subarray(8, 20))) { clearTimeout(t); s.close(); out({ id: m.id, ok: true }); }
    });
    s.send(req, m.port, m.host);
  }
});
process.stdin.on('end', () => process.exit(0));
`;

/** The agent of one namespace. */
export class NetnsAgent {
  readonly #child: ChildProcessByStdio<Writable, Readable, null>;
  readonly #waiting = new Map<number, (ok: boolean) => void>();
  readonly #received = new Map<string, number>();
  #next = 0;

  constructor(namespace: string) {
    this.#child = spawn('ip', ['netns', 'exec', namespace, process.execPath, '-e', AGENT], { stdio: ['pipe', 'pipe', 'inherit'] });
    createInterface({ input: this.#child.stdout }).on('line', (line) => {
      const message = JSON.parse(line) as { id?: number; ok?: boolean; event?: string; to?: string };
      if (message.event === 'datagram') this.#received.set(message.to ?? '', (this.#received.get(message.to ?? '') ?? 0) + 1);
      else if (message.id !== undefined) this.#waiting.get(message.id)?.(message.ok === true);
    });
  }

  #ask(message: Record<string, unknown>): Promise<boolean> {
    const id = ++this.#next;
    return new Promise((resolve) => {
      this.#waiting.set(id, resolve);
      this.#child.stdin.write(`${JSON.stringify({ id, ...message })}\n`);
    });
  }

  /** Binds a UDP listener at host:port in the namespace; it counts every datagram reaching it. */
  async listen(host: string, port: number): Promise<void> {
    if (!(await this.#ask({ op: 'listen', host, port }))) throw new Error(`could not listen on ${host}:${String(port)}`);
  }

  /** Datagrams that reached the listener at host:port so far. */
  received(host: string, port: number): number {
    return this.#received.get(`${host}:${String(port)}`) ?? 0;
  }

  /** Whether a STUN server at host:port answers a Binding request from this namespace. */
  binding(host: string, port: number): Promise<boolean> {
    return this.#ask({ op: 'binding', host, port });
  }

  close(): void {
    this.#child.stdin.end();
  }
}

export interface TurnNetLab {
  turn: Coturn;
  /** The agent on the TURN host. */
  host: NetnsAgent;
  /** The agent on the internet. */
  internet: NetnsAgent;
  /** Loads docs/operations.md's nft ruleset and sysctl on the TURN host. */
  loadFirewall(): void;
  /** Packets the TURN host's nft counters have counted, all rules together. */
  firewallCounted(): number;
  destroy(): Promise<void>;
}

/** Whether the lab can be made here: root, iproute2 and nft. */
export function canMakeTurnLab(): boolean {
  return process.getuid?.() === 0;
}

export async function startTurnNetLab(secret: string): Promise<TurnNetLab> {
  const tag = randomBytes(3).toString('hex');
  const hostNs = `netdiag-turn-${tag}`;
  const netNs = `netdiag-inet-${tag}`;
  ip('netns', 'add', hostNs);
  ip('netns', 'add', netNs);
  const agents: NetnsAgent[] = [];
  let turn: Coturn | undefined;
  const destroy = async () => {
    for (const agent of agents) agent.close();
    await turn?.close();
    // Deleting a namespace deletes its end of the pair, and with it the other end.
    ip('netns', 'del', hostNs);
    ip('netns', 'del', netNs);
  };
  try {
    ip('-n', hostNs, 'link', 'set', 'lo', 'up');
    ip('-n', netNs, 'link', 'set', 'lo', 'up');
    ip('-n', hostNs, 'link', 'add', 'uplink', 'type', 'veth', 'peer', 'name', 'turnhost', 'netns', netNs);
    ip('-n', hostNs, 'addr', 'add', `${TURN_HOST}/32`, 'dev', 'uplink');
    ip('-n', hostNs, 'addr', 'add', `${TURN_HOST_OTHER}/32`, 'dev', 'uplink');
    ip('-n', netNs, 'addr', 'add', `${INTERNET_PEER}/32`, 'dev', 'turnhost');
    ip('-n', hostNs, 'link', 'set', 'uplink', 'up');
    ip('-n', netNs, 'link', 'set', 'turnhost', 'up');
    ip('-n', hostNs, 'route', 'add', '198.51.100.0/24', 'dev', 'uplink');
    ip('-n', netNs, 'route', 'add', '203.0.113.0/24', 'dev', 'turnhost');
    const host = new NetnsAgent(hostNs);
    const internet = new NetnsAgent(netNs);
    agents.push(host, internet);
    const exec = (command: string[]) => ['ip', 'netns', 'exec', hostNs, ...command];
    // The documented addresses and ports as they are: only paths and the secret differ.
    turn = await startCoturn(secret, { lab: { listen: TURN_HOST, relay: TURN_HOST }, exec, ready: (h, p) => host.binding(h, p) });
    const loadFirewall = () => {
      const { nft, sysctl } = documentedFirewall();
      execFileSync('ip', ['netns', 'exec', hostNs, 'nft', '-f', '-'], { input: nft, stdio: ['pipe', 'ignore', 'pipe'] });
      for (const [key, value] of sysctl) execFileSync('ip', ['netns', 'exec', hostNs, 'sysctl', '-q', '-w', `${key}=${value}`], { stdio: ['ignore', 'ignore', 'pipe'] });
    };
    const firewallCounted = () => {
      const ruleset = execFileSync('ip', ['netns', 'exec', hostNs, 'nft', 'list', 'ruleset'], { encoding: 'utf8' });
      return [...ruleset.matchAll(/counter packets (\d+)/g)].reduce((sum, match) => sum + Number(match[1]), 0);
    };
    return { turn, host, internet, loadFirewall, firewallCounted, destroy };
  } catch (err) {
    await destroy();
    throw err;
  }
}
