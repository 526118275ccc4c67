// `netdiag rpm`: responsiveness under working conditions against a netdiag deployment (its
// /.well-known/nq) or any server that serves the draft's configuration (`--config`), download
// then upload (rpm/run.ts), as a table or JSON, with a progress line on a terminal.
import cliProgress from 'cli-progress';
import { joinProbes, lowerConfidence, p90, probeComponents, responsiveness, rpmClass, type ProbeComponents } from '../../common/responsiveness/rpm.js';
import { pairs, print, printJson, type Output } from '../terminal/output.js';
import { fetchRpmConfig, RpmConfigError } from './responsiveness-config.js';
import { boundFetcher, FAMILY_OF_NUMBER, reachable, type Binding } from '../api/source.js';
import { RATE_LIMITED_EXIT } from '../api/rate-limit.js';
import { runDirection, RpmFailure, type DirectionRpm, type RpmProgress } from './run.js';
import { SocketMeter, type BytesMoved } from '../speedtest/socket-meter.js';
import { terminalText } from '../terminal/terminal-text.js';
import { RPM_REPORT_SCHEMA_VERSION, type RpmComponentsReport, type RpmDirectionReport, type RpmReport } from '../../common/speedtest/report.js';

interface RpmOptions {
  /** The configuration URL: `--config`, or `--url` with /.well-known/nq. */
  configUrl: string;
  /** How long a connection may take, and how long nothing may move, ms. */
  timeoutMs: number;
  /** Origins besides the configuration's own that its URLs may send the load to (`--allow-origin`). */
  allowOrigins?: readonly string[];
  /** How every connection is made (`--source`): the configuration's fetch, the load's and the probes' connections. */
  binding?: Binding;
}

/** The exit status of a run that was interrupted (128 + SIGINT), as the speed test's. */
const CANCELLED_EXIT = 130;

const round = (v: number | undefined, digits = 0): number | null => (v === undefined ? null : Math.round(v * 10 ** digits) / 10 ** digits);
const mbps = (bps: number): number => Math.round(bps / 1e4) / 100;
/** Each probe kind's trimmed mean, ms to a tenth (null for a kind not answered). */
const componentsReport = (c: ProbeComponents): RpmComponentsReport => ({
  foreign_ms: round(c.foreignMs, 1),
  tcp_ms: round(c.tcpMs, 1),
  tls_ms: round(c.tlsMs, 1),
  http_ms: round(c.httpMs, 1),
  self_ms: round(c.selfMs, 1),
});

/** The JSON report (docs/command-line.md, "netdiag rpm"). */
function rpmReport(down: DirectionRpm, up: DirectionRpm, moved: BytesMoved): RpmReport {
  // One figure for the test: both directions' probes in one formula, as goresponsiveness's final figure.
  const both = joinProbes([down.probes, up.probes]);
  const rpm = responsiveness(both);
  const direction = (d: DirectionRpm): RpmDirectionReport => ({
    rpm: round(d.rpm),
    rpm_p90: round(d.rpmP90),
    mbps: mbps(d.goodputBps),
    connections: d.connections,
    connections_failed: d.failedConnections,
    intervals: d.intervals,
    stable: d.goodputStable && d.rpmStable,
    goodput_stable: d.goodputStable,
    responsiveness_stable: d.rpmStable,
    confidence: d.confidence,
    probes: { foreign: d.probes.foreign.length, self: d.probes.self.length, lost: d.lost },
    components: componentsReport(d.components),
    duration_ms: Math.round(d.durationMs),
  });
  return {
    schema_version: RPM_REPORT_SCHEMA_VERSION,
    rpm: round(rpm),
    rpm_p90: round(responsiveness(both, p90)),
    rating: rpm === undefined ? null : rpmClass(rpm),
    download_rpm: round(down.rpm),
    upload_rpm: round(up.rpm),
    download_mbps: mbps(down.goodputBps),
    upload_mbps: mbps(up.goodputBps),
    stable: down.goodputStable && down.rpmStable && up.goodputStable && up.rpmStable,
    confidence: lowerConfidence(down.confidence, up.confidence),
    components: componentsReport(probeComponents(both)),
    download: direction(down),
    upload: direction(up),
    bytes_moved: { down: moved.down, up: moved.up },
  };
}

/** A line on standard error when it is a terminal, redrawn as the run goes; nothing otherwise. */
function progressLine(): { update(p: RpmProgress): void; stop(): void } {
  if (!process.stderr.isTTY) return { update: () => undefined, stop: () => undefined };
  const bar = new cliProgress.SingleBar({ stream: process.stderr, format: ' {bar} {phase}', hideCursor: true, clearOnComplete: true, barsize: 20 }, cliProgress.Presets.shades_classic);
  let started = false;
  return {
    update(p) {
      const rate = p.goodputBps === undefined ? '' : `, ${(p.goodputBps / 1e6).toFixed(1)} Mbps`;
      const rpm = p.rpm === undefined ? '' : `, ${Math.round(p.rpm).toString()} RPM`;
      const phase = `${p.direction}: ${String(p.connections)} connection${p.connections === 1 ? '' : 's'}${rate}${rpm}`;
      const at = Math.round(p.elapsedMs / 1000) + (p.direction === 'upload' ? 20 : 0);
      if (!started) {
        bar.start(40, at, { phase });
        started = true;
      } else bar.update(at, { phase });
    },
    stop() {
      if (started) bar.stop();
    },
  };
}

const rpmText = (v: number | null) => (v === null ? 'not measured' : `${String(v)} RPM`);
const msText = (v: number | null) => (v === null ? '-' : v.toFixed(1));
const directionText = (d: RpmDirectionReport) =>
  `${rpmText(d.rpm)}, ${d.mbps.toFixed(1)} Mbps (${String(d.connections)} connections, ${d.stable ? 'stable' : 'not stable'}, ${String(d.probes.foreign + d.probes.self)} probes)`;
// The draft's two halves, so a figure can be told apart from another client's without --json.
const componentsText = (c: RpmComponentsReport) =>
  `new connections ${msText(c.foreign_ms)} ms a round trip (TCP ${msText(c.tcp_ms)}, TLS ${msText(c.tls_ms)}, HTTP ${msText(c.http_ms)} ms), loaded connections ${msText(c.self_ms)} ms`;

/** The report as the table prints it, label and value. */
export function rpmLines(r: RpmReport): [string, string][] {
  return [
    ['responsiveness', r.rpm === null ? 'not measured' : `${String(r.rpm)} RPM (${String(r.rating)}; confidence ${r.confidence})`],
    ['download', directionText(r.download)],
    ['upload', directionText(r.upload)],
    ['p90', rpmText(r.rpm_p90)],
    ['made of', componentsText(r.components)],
  ];
}

export async function rpmCommand(out: Output, options: RpmOptions): Promise<number> {
  const abort = new AbortController();
  const interrupt = () => {
    abort.abort();
  };
  process.once('SIGINT', interrupt);
  const line = progressLine();
  let down: DirectionRpm;
  let up: DirectionRpm;
  // Both directions' connections, load and probes alike: the bytes the report says the test moved.
  const meter = new SocketMeter();
  try {
    const binding = options.binding ?? {};
    // A source of one family cannot reach a host of the other: said before anything is sent.
    if (binding.family !== undefined) await reachable(options.configUrl, FAMILY_OF_NUMBER[binding.family]);
    const urls = await fetchRpmConfig(options.configUrl, options.timeoutMs, options.allowOrigins, boundFetcher(binding, options.timeoutMs));
    if (binding.family !== undefined) await reachable(urls.origin, FAMILY_OF_NUMBER[binding.family]);
    // Said whatever the output: the load goes to a server the configuration named, not the one given.
    if (urls.origin !== new URL(options.configUrl).origin) process.stderr.write(`netdiag: the test's load goes to ${urls.origin}, as the configuration ${terminalText(options.configUrl)} names it (allowed with --allow-origin)\n`);
    const run = { deadlineMs: options.timeoutMs, onProgress: (p: RpmProgress) => { line.update(p); }, signal: abort.signal, binding, meter };
    down = await runDirection(urls, 'download', run);
    up = await runDirection(urls, 'upload', run);
  } catch (err) {
    line.stop();
    if (abort.signal.aborted) {
      process.stderr.write('netdiag: the responsiveness test was cancelled\n');
      return CANCELLED_EXIT;
    }
    if (err instanceof RpmConfigError || err instanceof RpmFailure) {
      process.stderr.write(`netdiag: ${terminalText(err.message)}\n`);
      // A refusal by the rate limit is not waited out mid-test (the load would stop): exit 4.
      return err instanceof RpmFailure && err.limited ? RATE_LIMITED_EXIT : 1;
    }
    throw err;
  } finally {
    process.removeListener('SIGINT', interrupt);
  }
  line.stop();
  const r = rpmReport(down, up, meter.moved());
  if (out.json) {
    printJson(r);
    return 0;
  }
  print(pairs(out, rpmLines(r)));
  return 0;
}
