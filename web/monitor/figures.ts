// A run's figures as the monitor's page shows them: by the page's own names for them and in its
// units and number format (web/i18n/locale.ts), never the JSON's keys ("download_mbps 15972.47").
// The names are those the main page gives the same figures; a figure the page has no words for is
// left out. Read from the figures each check reports (src/cli/monitor/checks/, one file a kind).
import type { RpmReport, SpeedTestFigures } from '../../src/common/speedtest/report.js';
import { num, t } from '../i18n/locale.js';
import { bloatText, formatMbps, formatMs, lossText } from '../speedtest/result-text.js';

type Figures = Readonly<Record<string, number | string | null>>;

/**
 * The figures this page has words for: the speed test's and RPM test's by their report's type (a
 * renamed figure fails the type-check here), the other kinds' as their check files name them.
 */
type FigureName = keyof SpeedTestFigures | keyof Pick<RpmReport, 'rpm'> | 'client_to_api_rtt_ms' | 'edge_to_region_rtt_ms' | 'response_code' | 'answer_count' | 'ipv4' | 'ipv6' | 'ipv4_ms' | 'ipv6_ms';

/** A figure's name and its value, both as the page writes them. */
export interface ShownFigure {
  name: string;
  value: string;
}

const numberOf = (f: Figures, key: FigureName): number | undefined => {
  const v = f[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
};
const textOf = (f: Figures, key: FigureName): string | undefined => {
  const v = f[key];
  return typeof v === 'string' && v !== '' ? v : undefined;
};

/** A family's state (`netdiag ip --both`: ok, failed, timeout, unchecked) in the page's words, with its time when it answered. */
function familyState(f: Figures, family: 'ipv4' | 'ipv6'): string | undefined {
  const state = textOf(f, family);
  const ms = numberOf(f, `${family}_ms`);
  switch (state) {
    case undefined:
      return undefined;
    case 'ok':
      return ms === undefined ? t('monitor.value-ok') : t('families.answered-in', { time: formatMs(ms) });
    case 'timeout':
      return t('families.no-answer');
    case 'unchecked':
      return t('families.not-checked');
    default:
      return t('monitor.value-failed');
  }
}

const figure = (name: string, value: string | undefined): ShownFigure | undefined => (value === undefined ? undefined : { name, value });
const formatted = (f: Figures, key: FigureName, format: (v: number) => string): string | undefined => {
  const v = numberOf(f, key);
  return v === undefined ? undefined : format(v);
};

/** A bufferbloat grade with the latency it adds, as the main page writes it ("A+ (+0.9 ms)"). */
function bloat(f: Figures): string | undefined {
  const grade = textOf(f, 'bufferbloat_grade');
  const increaseMs = numberOf(f, 'loaded_latency_increase_ms');
  if (grade === undefined) return undefined;
  return increaseMs === undefined ? grade : bloatText({ grade, increaseMs });
}

/** A DNS check's answers: their count and the response code as the page's lookup writes it (web/dns/dns.ts). */
function dnsAnswers(f: Figures): string | undefined {
  const code = textOf(f, 'response_code');
  return code === undefined ? undefined : `${num(numberOf(f, 'answer_count') ?? 0)} (${code.replace('_', ' ')})`;
}

/** Each figure the page has words for, in the order a reader wants them: rates, latency, grade, then the other checks'. */
const READERS: readonly ((f: Figures) => ShownFigure | undefined)[] = [
  (f) => figure(t('speed.download'), formatted(f, 'download_mbps', (v) => formatMbps(v * 1e6))),
  (f) => figure(t('speed.upload'), formatted(f, 'upload_mbps', (v) => formatMbps(v * 1e6))),
  (f) => figure(t('speed.idle-latency'), formatted(f, 'latency_ms', formatMs)),
  (f) => figure(t('speed.bufferbloat'), bloat(f)),
  (f) => figure(t('speed.loss'), formatted(f, 'packet_loss_percent', lossText)),
  (f) => figure(t('history.rpm'), formatted(f, 'rpm', (v) => num(Math.round(v)))),
  (f) => figure(t('watch.you-server'), formatted(f, 'client_to_api_rtt_ms', formatMs)),
  (f) => figure(t('monitor.figure-edge'), formatted(f, 'edge_to_region_rtt_ms', formatMs)),
  (f) => figure(t('dns.caption'), dnsAnswers(f)),
  (f) => figure('IPv4', familyState(f, 'ipv4')),
  (f) => figure('IPv6', familyState(f, 'ipv6')),
];

/** The figures a card and a row show of a run: at most `count`, each named and in its unit. */
export function shownFigures(figures: Figures, count = 4): ShownFigure[] {
  return READERS.map((read) => read(figures))
    .filter((f): f is ShownFigure => f !== undefined)
    .slice(0, count);
}
