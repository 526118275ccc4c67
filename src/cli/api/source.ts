// Where a command's connections come from: `--source ADDRESS` (a local address every connection
// is bound to: API calls, transfers, round trips, the TURN path) and `-4` / `-6` (the family every
// connection is made over). Binding a socket to an address picks the packets' source address,
// not the interface they leave by: on a host with two uplinks, policy routing picks that
// (docs/command-line.md, "--source").
import { createSocket } from 'node:dgram';
import { lookup } from 'node:dns/promises';
import { once } from 'node:events';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { Agent, fetch as undiciFetch } from 'undici';
import { FAMILY_NAME, type Family } from '../../common/families.js';
import { ApiFailure, clientFor, type Binding, type Client, type Fetcher, type LimitPolicy } from './client.js';

export type { Binding } from './client.js';

export const FAMILY_NUMBER: Readonly<Record<Family, 4 | 6>> = { ipv4: 4, ipv6: 6 };
export const FAMILY_OF_NUMBER: Readonly<Record<4 | 6, Family>> = { 4: 'ipv4', 6: 'ipv6' };

/** Bad usage that no network could make work (exit 2): an address not on this host, a family that cannot reach the URL given. */
export class UsageError extends Error {}

/** A URL that names an address of the other family: bad usage (exit 2). */
export class FamilyMismatch extends UsageError {}

/** A host name without an address of the family: a fact about the name, not about the connection (exit 1). */
export class NoAddress extends ApiFailure {
  constructor(
    readonly host: string,
    readonly family: Family,
  ) {
    super(`${host} has no ${FAMILY_NAME[family]} address (${NO_ADDRESS_WHY[family]}), so it cannot be asked over ${FAMILY_NAME[family]}`);
  }
}

export const NO_ADDRESS_WHY: Readonly<Record<Family, string>> = { ipv4: 'no A record or hosts entry', ipv6: 'no AAAA record or hosts entry' };

/** The URL's host, without IPv6 brackets. */
const hostOf = (url: string): string => new URL(url).hostname.replace(/^\[|\]$/g, '');

/**
 * Checks that `url`'s host can be reached over `family` before asking: an address of the other
 * family is a usage error, a name without an address of the family a failure that says so.
 */
export async function reachable(url: string, family: Family): Promise<void> {
  const host = hostOf(url);
  const literal = isIP(host);
  const name = FAMILY_NAME[family];
  if (literal !== 0) {
    if (literal !== FAMILY_NUMBER[family]) throw new FamilyMismatch(`${url} names an ${literal === 4 ? 'IPv4' : 'IPv6'} address, which cannot be reached over ${name}`);
    return;
  }
  try {
    await lookup(host, { family: FAMILY_NUMBER[family] });
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ENOTFOUND' || code === 'ENODATA' || code === 'EAI_NODATA' || code === 'EAI_ADDRFAMILY') throw new NoAddress(host, family);
    throw new ApiFailure(`${host}: the ${name} address could not be looked up (${code ?? String(err)})`);
  }
}

/** This host's interface addresses, for an error that names what could be given instead. */
function hostAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .map((a) => a.address);
}

/**
 * `address` checked as a source: an IP address this host can send from, found by binding a UDP
 * socket to it (which sends nothing). The bind is the kernel's own answer: os.networkInterfaces()
 * lists 127.0.0.1/8 once where the whole 127/8 is local, and a tentative IPv6 address (duplicate
 * address detection not done, RFC 4862 §5.4) is listed but cannot be bound yet. Not one: UsageError.
 */
export async function checkSource(address: string): Promise<Binding & { localAddress: string; family: 4 | 6 }> {
  const family = isIP(address);
  if (family !== 4 && family !== 6) throw new UsageError(`--source takes an IP address of this host, not "${address}"`);
  const socket = createSocket(family === 4 ? 'udp4' : 'udp6');
  try {
    socket.bind({ address, port: 0, exclusive: true });
    await once(socket, 'listening');
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'EADDRNOTAVAIL' || code === 'EINVAL') throw new UsageError(`--source ${address} is not an address of this host (its addresses: ${hostAddresses().join(', ')})`);
    throw new UsageError(`--source ${address} cannot be sent from: ${code ?? String(err)}`);
  } finally {
    socket.close();
  }
  return { localAddress: address, family };
}

/**
 * The binding of `--source` and `-4` / `-6` together: a source fixes the family (a socket bound
 * to an IPv4 address connects over IPv4 only), so a family that is not the source's is bad usage.
 */
export async function bindingOf(options: { source?: string; family?: Family }): Promise<Binding> {
  const family = options.family === undefined ? undefined : FAMILY_NUMBER[options.family];
  if (options.source === undefined) return family === undefined ? {} : { family };
  const source = await checkSource(options.source);
  if (family !== undefined && family !== source.family) throw new UsageError(`--source ${options.source} is an ${FAMILY_NAME[FAMILY_OF_NUMBER[source.family]]} address: it cannot connect over ${FAMILY_NAME[FAMILY_OF_NUMBER[family]]}`);
  return source;
}

/** Whether `binding` asks for anything the system would not do by itself. */
const bound = (binding: Binding): boolean => binding.localAddress !== undefined || binding.family !== undefined;

/**
 * A fetch whose every connection is made as `binding` says. The connect deadline is the
 * request's: a connection to a family that swallows packets must not outlive the request that
 * gave up on it, holding the process open for undici's own 10 s. With nothing bound, the
 * platform's fetch. (undici takes the local address as the agent's option: one under `connect`
 * is overwritten by the agent's own, unset.)
 */
export function boundFetcher(binding: Binding, timeoutMs: number): Fetcher {
  if (!bound(binding)) return fetch;
  const dispatcher = new Agent({ ...(binding.localAddress === undefined ? {} : { localAddress: binding.localAddress }), connect: { timeout: timeoutMs, ...(binding.family === undefined ? {} : { family: binding.family }) } });
  return (url, init) => undiciFetch(url, { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher }) as unknown as Promise<Response>;
}

/** The options node:http, node:net and node:tls take for `binding` (their `localAddress` and `family`). */
export function socketOptions(binding: Binding): { localAddress?: string; family?: 4 | 6 } {
  return { ...(binding.localAddress === undefined ? {} : { localAddress: binding.localAddress }), ...(binding.family === undefined ? {} : { family: binding.family }) };
}

/**
 * A client for the deployment at `url` whose every connection is made as `binding` says, its
 * host checked first: a URL of the other family is UsageError, a name without an address of the
 * family NoAddress, before anything is sent.
 */
export async function boundClient(url: string, timeoutMs: number, binding: Binding, limits?: LimitPolicy): Promise<Client> {
  if (binding.family !== undefined) {
    try {
      await reachable(url, FAMILY_OF_NUMBER[binding.family]);
    } catch (err) {
      // The family came from --source, not from -4 / -6: say so.
      if (err instanceof FamilyMismatch && binding.localAddress !== undefined) throw new FamilyMismatch(`${err.message} (--source ${binding.localAddress} is an ${FAMILY_NAME[FAMILY_OF_NUMBER[binding.family]]} address)`);
      throw err;
    }
  }
  return { ...clientFor(url, timeoutMs, boundFetcher(binding, timeoutMs), limits), binding };
}
