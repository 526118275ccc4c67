// The page's dual-stack check: asks /v1/ip of the deployment's IPv4-only and IPv6-only origins
// (named on the page's root element, and allowed by its Content-Security-Policy, by the server),
// times each, and shows both addresses, the family the browser chose, and the verdict.
import type { Schemas } from '../../src/generated/openapi-types.js';
import { $, showFigure } from '../ui/dom.js';
import { familyWords, t } from '../i18n/locale.js';
import { isIpv6LiteralOrigin } from '../../src/common/origin.js';
import { describeCheck, FAMILY_TIMEOUT_MS, networkText, preference, settleCheck, verdict, type Family, type FamilyCheck } from '../../src/common/families.js';

type IpData = Schemas['CallerIpData'];


/** One family's origin asked once, with no cache, no credentials and a deadline. */
async function check(family: Family, origin: string): Promise<FamilyCheck> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  try {
    const res = await fetch(`${origin}/v1/ip`, { cache: 'no-store', credentials: 'omit', headers: { Accept: 'application/json' }, signal: AbortSignal.timeout(FAMILY_TIMEOUT_MS) });
    const body = (await res.json()) as { data?: IpData };
    const ms = elapsed();
    // A problem (a 429, a 503) is an answer over the family: it is there, the address unknown.
    if (body.data === undefined) return { state: 'ok', ms, address: `answered ${String(res.status)}`, network: null };
    if (body.data.ip_version !== family) return { state: 'mixed', ms, address: body.data.address };
    return { state: 'ok', ms, address: body.data.address, network: networkText(body.data.network) };
  } catch (err) {
    if (err instanceof DOMException && err.name === 'TimeoutError') return { state: 'timeout', ms: elapsed() };
    return { state: 'failed', ms: elapsed() };
  }
}

const fill = (cell: HTMLElement, { value, detail }: { value: string; detail: string }): void => {
  showFigure(cell, value, detail);
};

function show(family: Family, result: FamilyCheck): void {
  const cell = $(`#families [data-family="${family}"]`);
  fill(cell, describeCheck(family, result, familyWords()));
  cell.dataset.state = result.state;
}

/** Runs the check once the page's own /v1/ip answer (`page`) is known; undefined when it failed. */
export async function showFamilies(page: IpData | undefined): Promise<void> {
  const root = document.documentElement.dataset;
  const origins: Record<Family, string | undefined> = { ipv4: root.ipv4Url, ipv6: root.ipv6Url };
  if (page !== undefined) fill($('#families [data-field="preferred"]'), preference(page.ip_version, location.hostname, familyWords()));
  const results = await Promise.all(
    (['ipv4', 'ipv6'] as const).map(async (family): Promise<FamilyCheck> => {
      const origin = origins[family];
      // An IPv6-literal origin cannot be named in the page's policy, but when the page was opened
      // there it is the page's own origin, which the policy allows as 'self'.
      const pageFamily = page === undefined ? undefined : { family: page.ip_version, address: page.address, network: networkText(page.network) };
      if (origin !== undefined && (!isIpv6LiteralOrigin(origin) || origin === location.origin)) return settleCheck(family, await check(family, origin), pageFamily);
      const viaPage = page !== undefined && page.ip_version === family ? { address: page.address, network: networkText(page.network) } : undefined;
      return { state: 'unchecked', reason: origin === undefined ? 'no-origin' : 'literal', viaPage };
    }),
  );
  const [v4, v6] = results as [FamilyCheck, FamilyCheck];
  show('ipv4', v4);
  show('ipv6', v6);
  const found = verdict(v4, v6, familyWords());
  const line = $('#families-verdict');
  // With no family origin set, nothing was wrong and nothing more could be asked: the page says
  // what it could tell and how the operator turns the full check on, rather than "not checked".
  const unset = origins.ipv4 === undefined && origins.ipv6 === undefined && page !== undefined;
  line.textContent = unset ? t('families.unset', { name: page.ip_version === 'ipv4' ? 'IPv4' : 'IPv6' }) : found.text;
  line.dataset.verdict = unset ? 'unset' : found.kind;
}
