// The family choice beside Start, when the deployment has single-family origins (NETDIAG_IPV4_URL,
// NETDIAG_IPV6_URL, named on the page's root element and allowed by its policy; see
// web/connection/dual-stack.ts): Automatic (the browser's own pick, against the server chosen),
// IPv4 or IPv6 alone, or both, one after the other, each family's figures side by side. A family
// is measured against this deployment's own origin for it: a listed server has no such origins.
import { isIpv6LiteralOrigin } from '../../src/common/origin.js';
import { FAMILY_NAME, type Family } from '../../src/common/families.js';
import { $, option } from '../ui/dom.js';
import type { FigureName, SpeedResult } from './speed-result.js';
import type { MessageKey } from '../i18n/en.js';
import { listed, t } from '../i18n/locale.js';

/** One family's run: the family and the origin that answers over it alone. */
export interface FamilyRun {
  family: Family;
  base: string;
}

/** What the form asks for: no family (the browser picks), or the runs, in order. */
export interface FamilyChoice {
  runs(): FamilyRun[];
}

/**
 * The family origins the page may ask: set, and not an IPv6 literal (which its policy cannot
 * name) unless it is the page's own origin.
 */
function familyOrigins(): FamilyRun[] {
  const root = document.documentElement.dataset;
  const origins: [Family, string | undefined][] = [
    ['ipv4', root.ipv4Url],
    ['ipv6', root.ipv6Url],
  ];
  return origins.flatMap(([family, base]) => (base === undefined || (isIpv6LiteralOrigin(base) && base !== location.origin) ? [] : [{ family, base }]));
}

/**
 * Fills the choice from the family origins (hidden when there are none); `onChange` is told
 * whether a family is chosen, as the server choice then does not apply.
 */
export function setUpFamilies(onChange: (chosen: boolean) => void): FamilyChoice {
  const origins = familyOrigins();
  const none: FamilyChoice = { runs: () => [] };
  if (origins.length === 0) return none;
  const select = $<HTMLSelectElement>('#speed-family');
  select.replaceChildren(option('', t('speed.family-auto')), ...origins.map((o) => option(o.family, FAMILY_NAME[o.family])), ...(origins.length === 2 ? [option('both', t('speed.family-both'))] : []));
  $('#speed-family-pair').hidden = false;
  const chosen = (): FamilyRun[] => (select.value === 'both' ? origins : origins.filter((o) => o.family === select.value));
  const note = $('#speed-family-note');
  select.addEventListener('change', () => {
    const runs = chosen();
    note.hidden = runs.length === 0;
    note.textContent = runs.length === 0 ? '' : t('speed.family-own', { origins: listed(runs.map((r) => `${FAMILY_NAME[r.family]} ${r.base}`)) });
    onChange(runs.length > 0);
  });
  return { runs: chosen };
}

/** The figures each family's column shows, by their headline names. */
const FAMILY_FIGURES: [FigureName, MessageKey][] = [
  ['download', 'speed.download'],
  ['upload', 'speed.upload'],
  ['latency', 'speed.idle-latency'],
  ['loaded', 'speed.loaded'],
  ['bufferbloat', 'speed.bufferbloat'],
];

/** Each family's figures side by side, a column each (each cell's figure named in `data-figure`, not `data-metric`, which the result's own figures are found by, and its exact number in `data-value`); none hides the table. */
export function showFamilyFigures(results: readonly { family: Family; result: SpeedResult }[]): void {
  const box = $('#speed-families');
  box.hidden = results.length === 0;
  const table = $<HTMLTableElement>('#speed-families-table');
  const th = (label: string, scope: 'col' | 'row') => {
    const cell = document.createElement('th');
    cell.scope = scope;
    cell.textContent = label;
    return cell;
  };
  const head = document.createElement('tr');
  head.append(th(t('speed.families-figure'), 'col'), ...results.map((r) => th(FAMILY_NAME[r.family], 'col')));
  table.tHead?.replaceChildren(head);
  table.tBodies[0]?.replaceChildren(
    ...FAMILY_FIGURES.map(([name, label]) => {
      const row = document.createElement('tr');
      row.append(
        th(t(label), 'row'),
        ...results.map((r) => {
          const cell = document.createElement('td');
          const figure = r.result.figures[name];
          cell.textContent = figure.value;
          cell.dataset.family = r.family;
          cell.dataset.figure = name;
          if (figure.exact !== undefined) cell.dataset.value = String(figure.exact);
          return cell;
        }),
      );
      return row;
    }),
  );
}
