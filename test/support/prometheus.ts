// A real Prometheus for the suites (Debian's package): started on loopback with scrape targets
// and rule files, queried through its HTTP API; and the checks both suites hold the deploy/ files
// to: every series selector of an expression selects series the live target exports (a misspelt
// metric or label selects none), and a Grafana dashboard's expressions name only exported metrics.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually, freePort } from './wait.js';

/** Aggregation and matching clauses whose parentheses hold label names, not series. */
const LABEL_LISTS = /\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g;
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset']);

/**
 * The series selectors of a PromQL expression, each with its label matchers: `up{job="netdiag"}`,
 * `netdiag_events_dropped_total`. Function names (followed by a parenthesis), keywords, label
 * lists, range durations and numbers are not selectors.
 */
export function selectorsOf(expr: string): string[] {
  const text = expr.replace(LABEL_LISTS, ' ').replace(/\[[^\]]*\]/g, ' ');
  const found = new Set<string>();
  for (const [, name = '', matchers = '', call] of text.matchAll(/(?<![\w:.])([a-zA-Z_:][\w:]*)\s*(\{[^}]*\})?(\s*\()?/g)) {
    if (call !== undefined || KEYWORDS.has(name)) continue;
    found.add(`${name}${matchers}`);
  }
  return [...found];
}

export interface QueryReply {
  status: 'success' | 'error';
  error?: string;
  data?: { result: { metric: Record<string, string>; value: [number, string] }[] };
}

export interface Prometheus {
  api: string;
  query(expr: string): Promise<QueryReply>;
  get<T>(path: string): Promise<T>;
  /** Resolves once every target has been scraped twice after now (rate() needs two samples) and every rule group evaluated since. */
  settled(): Promise<boolean>;
  /** What it printed, for a failure's message. */
  log(): string;
  close(): Promise<void>;
}

/** Starts Prometheus scraping `targets` (job → host:port) every second with `rules` loaded; resolves once it is ready. */
export async function startPrometheus(targets: Readonly<Record<string, string>>, rules: readonly string[]): Promise<Prometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-prometheus-'));
  const port = await freePort();
  const api = `http://127.0.0.1:${String(port)}`;
  writeFileSync(
    join(dir, 'prometheus.yml'),
    `global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
${rules.map((r) => `  - ${JSON.stringify(r)}`).join('\n')}
scrape_configs:
${Object.entries(targets)
  .map(([job, target]) => `  - job_name: ${job}\n    static_configs:\n      - targets: ['${target}']`)
  .join('\n')}
`,
  );
  const child: ChildProcess = spawn('prometheus', [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${String(port)}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let printed = '';
  const keep = (chunk: Buffer) => {
    printed += chunk.toString('utf8');
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const get = async <T>(path: string): Promise<T> => (await (await fetch(`${api}${path}`)).json()) as T;
  const close = async () => {
    if (child.exitCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const stuck = setTimeout(() => {
        child.kill('SIGKILL');
      }, 5_000);
      await exited;
      clearTimeout(stuck);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const ready = await eventually(async () => (await fetch(`${api}/-/ready`).catch(() => undefined))?.status === 200, 15_000, 100);
  if (!ready) {
    await close();
    throw new Error(`Prometheus did not start: ${printed}`);
  }
  return {
    api,
    get,
    log: () => printed,
    close,
    query: async (expr) => (await (await fetch(`${api}/api/v1/query`, { method: 'POST', body: new URLSearchParams({ query: expr }) })).json()) as QueryReply,
    settled: async () => {
      // The latest scrape of every target, if all are up (0 otherwise).
      const lastScrape = async () => {
        const active = (await get<{ data: { activeTargets: { health: string; lastScrape: string }[] } }>('/api/v1/targets')).data.activeTargets;
        return active.length === Object.keys(targets).length && active.every((t) => t.health === 'up') ? Math.min(...active.map((t) => Date.parse(t.lastScrape))) : 0;
      };
      // A scrape after now, then another after that one: two samples of every series.
      let first = 0;
      const now = Date.now();
      if (!(await eventually(async () => (first = await lastScrape()) > now, 20_000, 100))) return false;
      let second = 0;
      if (!(await eventually(async () => (second = await lastScrape()) > first, 10_000, 100))) return false;
      return eventually(async () => {
        const groups = (await get<{ data: { groups: { lastEvaluation: string }[] } }>('/api/v1/rules')).data.groups;
        return groups.every((g) => Date.parse(g.lastEvaluation) > second);
      }, 10_000, 100);
    },
  };
}

/** What is wrong with an expression: it fails to run, or one of its selectors selects nothing. */
export async function problemsOf(prometheus: Pick<Prometheus, 'query'>, name: string, expr: string): Promise<string[]> {
  const problems: string[] = [];
  const whole = await prometheus.query(expr);
  if (whole.status !== 'success') problems.push(`${name}: the expression fails: ${whole.error ?? ''}`);
  const selectors = selectorsOf(expr);
  if (selectors.length === 0) problems.push(`${name}: no series selector found in ${expr}`);
  // A value excluded with != must exist too: a misspelt one would exclude nothing, silently.
  const excluded = selectors.flatMap((s) => [...s.matchAll(/(\w+)\s*!=\s*("[^"]*")/g)].map(([, label = '', value = '']) => `${s.replace(/\{.*$/s, '')}{${label}=${value}}`));
  for (const selector of [...selectors, ...excluded]) {
    const counted = await prometheus.query(`count(${selector})`);
    if (counted.status !== 'success' || (counted.data?.result.length ?? 0) === 0) problems.push(`${name}: ${selector} selects no series`);
  }
  return problems;
}

interface Panel {
  title?: string;
  datasource?: { uid?: string };
  targets?: { expr?: string }[];
  panels?: Panel[];
}

export interface Dashboard {
  schemaVersion: number;
  templating: { list: { name: string; type: string; query: unknown }[] };
  panels: Panel[];
}

export const readDashboard = (path: string): Dashboard => JSON.parse(readFileSync(path, 'utf8')) as Dashboard;

/** Each panel's expressions, with the panel's title and data source uid. */
export function dashboardTargets(dashboard: Dashboard): { panel: string; uid: string | undefined; expr: string }[] {
  const panelsOf = (panels: Panel[]): Panel[] => panels.flatMap((p) => [p, ...panelsOf(p.panels ?? [])]);
  return panelsOf(dashboard.panels).flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title ?? '', uid: p.datasource?.uid, expr: t.expr ?? '' })));
}

/**
 * Whether a metric name is in an exposition: as a sample, or as a family declared by its # TYPE
 * line (a histogram with no observation yet has only that, and its _bucket, _sum and _count are
 * still what it exports).
 */
export function exportedIn(exposition: string): (name: string) => boolean {
  const samples = new Set<string>();
  const types = new Map<string, string>();
  for (const line of exposition.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type !== null) types.set(type[1] ?? '', type[2] ?? '');
    else if (line !== '' && !line.startsWith('#')) samples.add(/^[a-zA-Z_:][\w:]*/.exec(line)?.[0] ?? '');
  }
  return (name) => {
    if (samples.has(name) || ['counter', 'gauge', 'untyped'].includes(types.get(name) ?? '')) return true;
    const part = /^(.*)_(?:bucket|sum|count)$/.exec(name);
    return part !== null && ['histogram', 'summary'].includes(types.get(part[1] ?? '') ?? '');
  };
}
