// `netdiag ip -4 | -6 | --both`: the deployment asked over one address family, or over each.
// A family is forced at the socket (undici's connector resolves and connects with that family
// only), so an answer over IPv6 can only have come over IPv6, whatever the name's records.
import type { Schemas } from '../../generated/openapi-types.js';
import { FAMILY_MESSAGES, FAMILY_NAME, FAMILY_TIMEOUT_MS, describeCheck, networkText, verdict, type Family, type FamilyCheck } from '../../common/families.js';
import { fill } from '../../common/template.js';
import { ApiFailure, type Client } from '../api/client.js';
import { boundClient, FAMILY_NUMBER, FamilyMismatch, NO_ADDRESS_WHY, NoAddress, type Binding } from '../api/source.js';
import { pairs, print, printJson, type Output } from '../terminal/output.js';

type IpData = Schemas['CallerIpData'];

/** A client for the deployment at `url` that asks over `family` only (from `binding`'s source address, when it has one). */
export async function familyClient(url: string, timeoutMs: number, family: Family, binding: Binding = {}): Promise<Client> {
  return boundClient(url, timeoutMs, { ...binding, family: FAMILY_NUMBER[family] });
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
