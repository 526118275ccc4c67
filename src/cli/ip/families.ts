// `netdiag ip -4 | -6 | --both`: the deployment asked over one address family, or over each.
// A family is forced at the socket (undici's connector resolves and connects with that family
// only), so an answer over IPv6 can only have come over IPv6, whatever the name's records.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import type { Schemas } from '../../generated/openapi-types.js';
import { FAMILY_MESSAGES, FAMILY_NAME, FAMILY_TIMEOUT_MS, describeCheck, networkText, verdict, type Family, type FamilyCheck } from '../../common/families.js';
import { fill } from '../../common/template.js';
import { ApiFailure, clientFor, type Client, type Fetcher } from '../api/client.js';
import { pairs, print, printJson, type Output } from '../terminal/output.js';

type IpData = Schemas['CallerIpData'];

const NUMBER: Readonly<Record<Family, 4 | 6>> = { ipv4: 4, ipv6: 6 };

/** A wrong-family address in the URL: bad usage (exit 2), since no network could make it work. */
export class FamilyMismatch extends Error {}

/** A host name without an address of the family: a fact about the name, not about the connection (exit 1 for -4 or -6). */
class NoAddress extends ApiFailure {
  constructor(readonly host: string, readonly family: Family) {
    super(`${host} has no ${FAMILY_NAME[family]} address (${NO_ADDRESS_WHY[family]}), so it cannot be asked over ${FAMILY_NAME[family]}`);
  }
}

const NO_ADDRESS_WHY: Readonly<Record<Family, string>> = { ipv4: 'no A record or hosts entry', ipv6: 'no AAAA record or hosts entry' };

/** The URL's host, without IPv6 brackets. */
const hostOf = (url: string): string => new URL(url).hostname.replace(/^\[|\]$/g, '');

/**
 * Checks that `url`'s host can be reached over `family` before asking: an address of the other
 * family is a usage error, a name without an address of the family a failure that says so.
 */
async function reachable(url: string, family: Family): Promise<void> {
  const host = hostOf(url);
  const literal = isIP(host);
  const name = FAMILY_NAME[family];
  if (literal !== 0) {
    if (literal !== NUMBER[family]) throw new FamilyMismatch(`${url} names an ${literal === 4 ? 'IPv4' : 'IPv6'} address, which cannot be reached over ${name}`);
    return;
  }
  try {
    await lookup(host, { family: NUMBER[family] });
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ENOTFOUND' || code === 'ENODATA' || code === 'EAI_NODATA' || code === 'EAI_ADDRFAMILY') throw new NoAddress(host, family);
    throw new ApiFailure(`${host}: the ${name} address could not be looked up (${code ?? String(err)})`);
  }
}

/**
 * A fetch that connects over `family` only. The connect deadline is the request's: a connection
 * to a family that swallows packets must not outlive the request that gave up on it, holding the
 * process open for undici's own 10 s.
 */
function familyFetch(family: Family, timeoutMs: number): Fetcher {
  const dispatcher = new Agent({ connect: { family: NUMBER[family], timeout: timeoutMs } });
  return (url, init) => undiciFetch(url, { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher }) as unknown as Promise<Response>;
}

/** A client for the deployment at `url` that asks over `family` only. */
export async function familyClient(url: string, timeoutMs: number, family: Family): Promise<Client> {
  await reachable(url, family);
  return clientFor(url, timeoutMs, familyFetch(family, timeoutMs));
}

/** One family asked: where, what it found, and the /v1/ip data when it answered. */
interface Asked {
  url: string;
  check: FamilyCheck;
  data: IpData | undefined;
  error: string | undefined;
  /** The URL's host name has no address of the family: the family went unchecked for that, not for the connection. */
  noAddress?: NoAddress;
}


/**
 * Asks /v1/ip of `url` over `family`, with the page's deadline (FAMILY_TIMEOUT_MS): past it the
 * family counts as broken, as in the page; a failure before it means the family is missing.
 */
async function ask(url: string, family: Family): Promise<Asked> {
  const started = performance.now();
  const ms = () => performance.now() - started;
  try {
    const client = await familyClient(url, FAMILY_TIMEOUT_MS, family);
    const data = await client.get<IpData>('/v1/ip');
    const check: FamilyCheck = { state: 'ok', ms: ms(), address: data.address, network: networkText(data.network) };
    return { url, check, data, error: undefined };
  } catch (err) {
    // Only the deployment's own URL is asked over both families, and an address in it reaches
    // one: the other family is not checked, for want of an address of it.
    if (err instanceof FamilyMismatch) return { url, check: { state: 'unchecked', reason: 'no-origin' }, data: undefined, error: err.message };
    // A name without an address of the family (`localhost` with no ::1 entry) says nothing of
    // whether this connection has the family: unchecked, with the name's reason, not "failed".
    if (err instanceof NoAddress) return { url, check: { state: 'unchecked', reason: 'no-origin' }, data: undefined, error: err.message, noAddress: err };
    const message = err instanceof Error ? err.message : String(err);
    // The client words a deadline as "no answer from … within N ms".
    const timedOut = message.includes(`within ${String(FAMILY_TIMEOUT_MS)} ms`);
    return { url, check: timedOut ? { state: 'timeout', ms: ms() } : { state: 'failed', ms: ms() }, data: undefined, error: message };
  }
}

const noAddressWhy = (err: NoAddress): string => `${err.host} has no ${FAMILY_NAME[err.family]} address: ${NO_ADDRESS_WHY[err.family]}`;

/**
 * The verdict, its reason for an unchecked family replaced by the name's when the name had no
 * address of it: "this server has no IPv6-only address" would blame the deployment, and "no
 * IPv6 on this connection" the connection, where it is only the name (the page never meets it:
 * a browser resolves the name itself).
 */
function withNameReason(found: ReturnType<typeof verdict>, ipv4: Asked, ipv6: Asked): ReturnType<typeof verdict> {
  const pairs = [[ipv4, ipv6, 'ipv4', 'ipv6'], [ipv6, ipv4, 'ipv6', 'ipv4']] as const;
  for (const [works, unchecked, family, other] of pairs) {
    if (works.data === undefined || unchecked.noAddress === undefined) continue;
    return { ...found, text: fill(FAMILY_MESSAGES['families.partial'], { name: FAMILY_NAME[family], other: FAMILY_NAME[other], why: noAddressWhy(unchecked.noAddress) }) };
  }
  return found;
}

/**
 * `netdiag ip --both`: the deployment's family origins when it advertises them (GET
 * /v1/ip/families), else its own URL over each family. Exit 0 when either family answered.
 */
export async function bothFamiliesCommand(client: Client, out: Output): Promise<void> {
  const origins = await client.get<Schemas['FamilyOrigins']>('/v1/ip/families').catch((err: unknown) => {
    // A deployment from before the route (404) is asked at its own URL over each family.
    if (err instanceof ApiFailure && err.status === 404) return { ipv4_url: null, ipv6_url: null };
    throw err;
  });
  const [ipv4, ipv6] = await Promise.all([ask(origins.ipv4_url ?? client.base, 'ipv4'), ask(origins.ipv6_url ?? client.base, 'ipv6')]);
  const found = withNameReason(verdict(ipv4.check, ipv6.check), ipv4, ipv6);
  if (out.json) {
    const entry = (a: Asked) => ({ url: a.url, state: a.check.state, ms: 'ms' in a.check ? Math.round(a.check.ms * 10) / 10 : null, ip: a.data ?? null, error: a.error ?? null });
    printJson({ ipv4: entry(ipv4), ipv6: entry(ipv6), verdict: found.kind });
  } else {
    const line = (family: Family, a: Asked): [string, string] => {
      if (a.noAddress !== undefined) return [FAMILY_NAME[family], `${describeCheck(family, a.check).value} (${noAddressWhy(a.noAddress)}) via ${a.url}`];
      const { value, detail } = describeCheck(family, a.check);
      return [FAMILY_NAME[family], `${value} (${detail}) via ${a.url}${a.error === undefined || a.check.state === 'timeout' ? '' : `: ${a.error}`}`];
    };
    print(pairs(out, [line('ipv4', ipv4), line('ipv6', ipv6), ['verdict', found.text]]));
  }
  if (ipv4.data === undefined && ipv6.data === undefined) throw new ApiFailure(`neither family answered: ${found.text}`);
}
