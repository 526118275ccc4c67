// Debian's coturn on loopback, configured as docs/operations.md ("A TURN server for packet loss")
// hardens it: credentials only from the shared secret, UDP relay only, no peer in private,
// loopback or other special ranges except the server's own relay address, quotas and a bandwidth
// cap. On loopback the relay address must itself be a loopback one, so it is 127.0.0.2 (allowed,
// with `allow-loopback-peers`) while the rest of 127.0.0.0/8 stays denied: a peer on 127.0.0.1
// stands for the operator's own network.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './wait.js';

const TURN_RELAY_ADDRESS = '127.0.0.2';

/** The peer ranges a TURN server handing out credentials to anyone must refuse (IANA special-use registries). */
const DENIED_PEER_RANGES = [
  '0.0.0.0-0.255.255.255',
  '10.0.0.0-10.255.255.255',
  '100.64.0.0-100.127.255.255',
  '127.0.0.0-127.255.255.255',
  '169.254.0.0-169.254.255.255',
  '172.16.0.0-172.31.255.255',
  '192.0.0.0-192.0.0.255',
  '192.168.0.0-192.168.255.255',
  '198.18.0.0-198.19.255.255',
  '240.0.0.0-255.255.255.255',
  '::1',
  '64:ff9b::-64:ff9b::ffff:ffff',
  'fc00::-fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
  'fe80::-febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
];

export interface Coturn {
  port: number;
  url: string;
  secret: string;
  /** What coturn has logged so far. */
  log(): string;
  close(): Promise<void>;
}

/** Whether a STUN Binding request (RFC 8489 §6: no attributes) to the port is answered within 200 ms. */
async function answersBinding(port: number): Promise<boolean> {
  const socket = createSocket('udp4');
  const request = Buffer.alloc(20);
  request.writeUInt16BE(0x0001, 0);
  request.writeUInt32BE(0x2112a442, 4);
  randomBytes(12).copy(request, 8);
  try {
    const reply = once(socket, 'message') as Promise<[Buffer]>;
    socket.send(request, port, '127.0.0.1');
    const timeout = new Promise<undefined>((resolve) => setTimeout(resolve, 200));
    const answer = await Promise.race([reply, timeout]);
    return answer !== undefined && answer[0].readUInt16BE(0) === 0x0101 && answer[0].subarray(8, 20).equals(request.subarray(8, 20));
  } finally {
    socket.close();
  }
}

export async function startCoturn(secret: string): Promise<Coturn> {
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-coturn-'));
  const port = await freePort();
  // A relay port range of its own per server, inside the dynamic range.
  const minPort = 50_000 + (port % 100) * 100;
  const config = [
    'listening-ip=127.0.0.1',
    `listening-port=${String(port)}`,
    `relay-ip=${TURN_RELAY_ADDRESS}`,
    `min-port=${String(minPort)}`,
    `max-port=${String(minPort + 99)}`,
    'realm=netdiag.test',
    'use-auth-secret',
    `static-auth-secret=${secret}`,
    'fingerprint',
    'no-tls',
    'no-dtls',
    'no-tcp-relay',
    'no-multicast-peers',
    'no-cli',
    ...DENIED_PEER_RANGES.map((range) => `denied-peer-ip=${range}`),
    `allowed-peer-ip=${TURN_RELAY_ADDRESS}`,
    'allow-loopback-peers',
    'user-quota=4',
    'total-quota=100',
    'max-bps=1000000',
    `pidfile=${join(dir, 'turnserver.pid')}`,
    `userdb=${join(dir, 'turndb')}`,
    'log-file=stdout',
    'simple-log',
  ].join('\n');
  writeFileSync(join(dir, 'turnserver.conf'), `${config}\n`);
  const child: ChildProcess = spawn('turnserver', ['-c', join(dir, 'turnserver.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const deadline = Date.now() + 10_000;
  while (!(await answersBinding(port))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`coturn did not start:\n${log}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    port,
    url: `turn:127.0.0.1:${String(port)}`,
    secret,
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

interface UclientResult {
  code: number;
  output: string;
}

/**
 * coturn's own test client with the given credentials: `-y` relays between two of its own
 * allocations (what a loss test does), `peer` sends to that address instead.
 */
export async function uclient(turn: Coturn, username: string, credential: string, peer?: { host: string; port: number }): Promise<UclientResult> {
  const args = ['-p', String(turn.port), '-u', username, '-w', credential, '-n', '10', '-m', '1', '-c'];
  if (peer === undefined) args.push('-y');
  else args.push('-e', peer.host, '-r', String(peer.port));
  args.push('127.0.0.1');
  try {
    const { stdout, stderr } = await promisify(execFile)('turnutils_uclient', args, { timeout: 20_000 });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const failed = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : -1, output: (failed.stdout ?? '') + (failed.stderr ?? '') };
  }
}

