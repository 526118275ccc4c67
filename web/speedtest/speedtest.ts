// The speed test: the speed-test library the configuration names (@cloudflare/speedtest, bundled) for the
// idle latency and the packet-loss step, then the page's own load for each direction the mode
// runs (src/common/speedtest/load-loop.ts over the page's fetch transport, web/speedtest/fetch-transport.ts:
// parallel streams with no pause, measured by the rules the command line shares), against the chosen server's /__down and /__up (this one's unless the operator lists others; web/speedtest/server-choice.ts), with the analytics events the
// configuration advertises and nothing else (the API contract; docs/api.md, "Envelope, routes and limits").
import SpeedTest from '@cloudflare/speedtest';
import type { Schemas } from '../../src/generated/openapi-types.js';
import { $, api, option, problemText, showFigure, text } from '../ui/dom.js';
import { drawChart } from './chart.js';
import { browserLimitNote, stepLossCounts } from './result-text.js';
import { watchLossStep, type LossWatch } from './loss-watch.js';
import { uuidV4 } from '../events/uuid.js';
import { sendEvent } from '../events/events.js';
import type { FinishedTest, ShareOffer } from '../results/share.js';
import type { SharedResult } from '../../src/common/speedtest/share.js';
import { speedResult, windowRoundTrips, type Measured, type Multiplexing, type Readings, type SpeedResult } from './speed-result.js';
import { num, t } from '../i18n/locale.js';
import { startLive, type Live } from './live-view.js';
import { profileOf, STREAMS, type ByteCount } from '../../src/common/speedtest/working.js';
import { FetchLoadTransport, LoadError, multiplexingOf } from './fetch-transport.js';
import { idleRoundTrips, runLoadedDirection, type LoadRun } from '../../src/common/speedtest/load-loop.js';
import { LoadRefused, type LoadDirection } from '../../src/common/speedtest/load-transport.js';
import { LimitRefusal, pastLimit, type LimitWaits } from '../../src/common/rate-limit.js';
import type { MeasuredExport } from '../results/export.js';
import type { ChartDirection } from './chart.js';
import { serverLabel, type ServerChoice, type Target } from './server-choice.js';
import { setUpFamilies, showFamilyFigures } from './family-choice.js';
import type { Family } from '../../src/common/families.js';
import type { ListedServer } from '../../src/common/servers.js';

// The configuration as the contract (openapi/openapi.yaml) defines it.
type Configuration = Schemas['SpeedTestConfiguration'];
type Measurement = Schemas['SpeedTestMeasurement'];

/** A test that stops making progress for this long is given up as `timeout`. */
const STALL_MS = 60_000;

/**
 * The speed-test library's packet-loss step as its own defaults have it (1000 datagrams in batches of 10
 * every 10 ms, 3 s for stragglers), run last, when the deployment measured has a TURN server. The
 * connection through the TURN server gets 10 s to open, not the speed-test library's 5: on a lossy path the
 * opening's DTLS and SCTP flights are sent again after timers that double (RFC 6347 §4.2.4.1,
 * RFC 4960 §6.3.3), and two losses in one flight outlasted 5 s.
 */
const PACKET_LOSS_STEP = { type: 'packetLoss' as const, numPackets: 1000, batchSize: 10, batchWaitTime: 10, responsesWaitTime: 3000, connectionTimeout: 10_000 };

/**
 * The speed-test library's part of the v1 plan: its packet-loss step when there is a TURN server (its RPKI
 * step never), after one round trip, which every run of it starts with. The idle latency and the
 * transfers are the page's own (src/common/speedtest/load-loop.ts): the speed-test library's ladder of sizes with pauses
 * between them let a shaper's bucket refill and read the link fast, and its idle round trips are
 * timed apart from the loaded ones, which the bufferbloat grade compares them with.
 */
function libraryPlan(withLoss: boolean) {
  const plan = [{ type: 'latency' as const, numPackets: 1 }];
  return withLoss ? [...plan, PACKET_LOSS_STEP] : plan;
}

/** The directions the mode's plan has steps of, in the order the page runs them. */
const directionsOf = (measurements: Measurement[]): LoadDirection[] => (['download', 'upload'] as const).filter((d) => measurements.some((m) => m.type === d));

/** A direction as the load ran it, and whether its streams shared one HTTP/2 or HTTP/3 connection. */
type DirectionRun = LoadRun & { multiplexed: Multiplexing | undefined };

/** A step of the test run past the server's rate limit: again after each wait it asks for (src/common/rate-limit.ts). */
type PastLimit = <T>(step: () => Promise<T>) => Promise<T>;

/**
 * The mode's directions, one after the other, each followed by the live view and the stall check
 * (`onBytes` whenever its count grows); what each counted, measured, or the first failure. A
 * direction the rate limit refused is measured again from its start, after the wait.
 */
async function loadDirections(directions: LoadDirection[], load: { base: string; maxBytes: number; mode: string; streams: number }, signal: AbortSignal, live: Live, onBytes: () => void, past: PastLimit): Promise<Partial<Record<LoadDirection, DirectionRun>>> {
  const { maxBytes, mode, streams } = load;
  const runs: Partial<Record<LoadDirection, DirectionRun>> = {};
  const transport = new FetchLoadTransport(load.base);
  for (const direction of directions) {
    let counted = 0;
    const onProgress = (progress: readonly ByteCount[]) => {
      live.follow(direction, progress, profileOf(mode));
      const bytes = progress.at(-1)?.bytes ?? 0;
      if (bytes === counted) return;
      counted = bytes;
      onBytes();
    };
    let since = 0;
    const run = await past(() => {
      text('#speed-status', t(direction === 'download' ? 'speed.measuring-download' : 'speed.measuring-upload'));
      counted = 0;
      since = performance.now();
      return runLoadedDirection(transport, { direction, maxBytes, profile: profileOf(mode), streams, signal, onProgress });
    });
    runs[direction] = { ...run, multiplexed: multiplexingOf(load.base, direction, since) };
  }
  return runs;
}

/** Why the load failed, in the page's failure reasons: a refusal or a problem is the speed-test library's, anything else the network's. */
const loadFailure = (err: unknown): LoadError =>
  err instanceof LoadError ? err : new LoadError(err instanceof Error ? err.message : String(err), err instanceof LoadRefused ? 'engine_error' : 'network_error');

/** A direction as the result reads it. */
const measuredOf = (run: DirectionRun | undefined): Measured | undefined => (run === undefined ? undefined : { measure: run.measure, roundTrips: run.roundTrips, streams: run.streams, ...(run.multiplexed === undefined ? {} : { multiplexed: run.multiplexed }) });

/** A direction as the export keeps it. */
const exportedOf = (run: LoadRun | undefined): MeasuredExport | null => (run === undefined ? null : { streams: run.streams, progress: run.progress, roundTrips: run.roundTrips, endMs: run.endMs, measure: run.measure });

/** The round trips of a direction's window, ms. */
const windowMs = (run: LoadRun | undefined): number[] => {
  const window = run?.measure.sustained;
  return run === undefined || window === undefined ? [] : windowRoundTrips(run.roundTrips, window).map((r) => r.ms);
};

/** A direction as the chart draws it. */
const chartedOf = (run: LoadRun | undefined, reported: number | undefined): ChartDirection | undefined => (run === undefined ? undefined : { rates: run.measure.rates, window: run.measure.sustained, reported });

type Turn = { ok: true; hostPort: string; username: string; credential: string } | { ok: false; reason: string };

/** The listed server a test runs against when it is another deployment than this page's, else undefined. */
const otherDeployment = (target: Target): ListedServer | undefined => (target.server !== undefined && target.server.url !== location.origin ? target.server : undefined);

/**
 * Credentials for the TURN server of the deployment measured, or why packet loss cannot be
 * measured: the loss is that path's (docs/page.md, "Server"). This deployment's (a family origin
 * is this deployment too) is asked here, when the page's root says it has one (`data-turn`); a
 * listed server is asked at its own origin, a 404 there meaning it has none. The speed-test library
 * takes `host:port` and always asks for UDP (`turn:<host:port>?transport=udp`), so a `turns:` or
 * TCP-only server is out of its reach; WebRTC turned off is said as such.
 */
async function turnFor(target: Target): Promise<Turn> {
  const other = otherDeployment(target);
  if (other === undefined && document.documentElement.dataset.turn !== 'on') return { ok: false, reason: t('loss.no-turn') };
  if (typeof RTCPeerConnection === 'undefined') return { ok: false, reason: t('loss.no-webrtc') };
  const res = await api<Schemas['TurnCredentials']>(`${other?.url ?? ''}/v1/speed-test/turn-credentials`);
  if (!res.ok) {
    if (res.problem.status === 404) return { ok: false, reason: t('loss.no-turn') };
    // No answer the page may read: none came, or (another origin's) the browser kept it, the route
    // answering its own origin only (docs/api.md, "CORS"); the browser does not say which.
    if (other !== undefined && res.problem.status === undefined) return { ok: false, reason: t('loss.turn-unread', { server: other.name, reason: problemText(res.problem) }) };
    return { ok: false, reason: problemText(res.problem) };
  }
  const url = res.data.urls[0] ?? '';
  const match = /^turn:([^?]+)(?:\?transport=udp)?$/.exec(url);
  if (match === null) return { ok: false, reason: t('loss.not-udp', { url }) };
  return { ok: true, hostPort: match[1] ?? '', username: res.data.username, credential: res.data.credential };
}


/**
 * A result: its value, a line under it saying how it was reached or why it is missing, and its
 * exact figure in `data-value` (bits per second, milliseconds, percent) for scripts and tests.
 */
const metric = (name: string, value: string, detail?: string, exact?: number): void => {
  const element = $(`#speed-results [data-metric="${name}"]`);
  showFigure(element, value, detail);
  if (exact === undefined) delete element.dataset.value;
  else element.dataset.value = String(exact);
  delete element.dataset.burstPeak;
  delete element.dataset.burstBytes;
};

/** A finished test's figures drawn into the page, the verdict line above them; `measured` is the origin it ran against. */
function showResult(result: SpeedResult, measured: string): void {
  for (const [name, figure] of Object.entries(result.figures)) {
    metric(name, figure.value, figure.detail, figure.exact);
    if (figure.burst === undefined) continue;
    const element = $(`#speed-results [data-metric="${name}"]`);
    element.dataset.burstPeak = String(figure.burst.peakBps);
    element.dataset.burstBytes = String(figure.burst.bytes);
  }
  // What the loss rule read, for scripts and tests: the most messages that waited in the browser
  // at once, and the datagrams the sending connection sent and the receiving one received over the step.
  if (result.lossCounted) {
    const loss = $('#speed-results [data-metric="loss"]');
    loss.dataset.maxWaiting = result.lossSending === undefined ? '' : String(result.lossSending.maxWaiting);
    loss.dataset.datagrams = result.lossSending?.datagrams === undefined ? '' : String(result.lossSending.datagrams);
    loss.dataset.received = result.lossSending?.received === undefined ? '' : String(result.lossSending.received);
  }
  const verdict = $('#speed-verdict');
  verdict.textContent = result.verdict ?? '';
  verdict.hidden = result.verdict === undefined;
  const note = browserLimitNote(result.shared.downloadBps, result.shared.uploadBps, { measured, page: location.origin }, document.documentElement.dataset.clientPackage, window.isSecureContext);
  const noteElement = $('#speed-note');
  noteElement.hidden = note === undefined;
  if (note === undefined) noteElement.replaceChildren();
  else {
    const command = document.createElement('code');
    command.dir = 'ltr';
    command.textContent = note.command;
    noteElement.replaceChildren(`${note.text} `, command);
  }
}

/** The contract's speed_test_completed properties: rates in Mbit/s and times in ms to the hundredth, unmeasured ones left out. */
function completedProperties(result: SpeedResult, mode: string, durationMs: number): Record<string, string | number> {
  const hundredths = (v: number | undefined) => (v === undefined ? undefined : Math.round(v * 100) / 100);
  const s = result.shared;
  const properties: Record<string, string | number | undefined> = {
    mode,
    duration_ms: durationMs,
    download_mbps: hundredths(s.downloadBps === undefined ? undefined : s.downloadBps / 1e6),
    upload_mbps: hundredths(s.uploadBps === undefined ? undefined : s.uploadBps / 1e6),
    latency_ms: hundredths(s.latencyMs),
    jitter_ms: hundredths(s.jitterMs),
    streaming_quality: result.classes.streaming,
    gaming_quality: result.classes.gaming,
    video_call_quality: result.classes.video_call,
  };
  return Object.fromEntries(Object.entries(properties).filter((entry): entry is [string, string | number] => entry[1] !== undefined));
}

/** A mode's name as the selector lists it: the page's word for the two it knows, else the server's id. */
const modeName = (id: string): string => (id === 'light' ? t('speed.mode-light') : id === 'full' ? t('speed.mode-full') : id);
/** What a mode does: the page's words for the two it knows, else the server's description. */
const modeHint = (id: string, description: string): string => (id === 'light' ? t('speed.mode-light-hint') : id === 'full' ? t('speed.mode-full-hint') : description);

/** What a finished test is handed to: Share and Export, and the history this browser keeps. */
export interface AfterTest {
  share: ShareOffer;
  keep: (result: SharedResult) => void;
}

/**
 * One test as it runs: this page's configuration (its events), the server it measures and that
 * server's mode and per-request limit, its event id, when it began, and what it is handed to.
 */
interface TestRun {
  config: Configuration;
  target: Target;
  mode: Configuration['modes'][number];
  maxBytes: number;
  eventId: string;
  /** performance.now() and Date.now() at its start. */
  started: number;
  startedAt: number;
  /** The load's parallel streams: STREAMS, or 1 when the single-stream choice is made. */
  streams: number;
  /** The family the test is held to (against this deployment's origin for it), when one is chosen. */
  family: Family | undefined;
  after: AfterTest;
  /** Told the result when the test ends, or undefined when it failed or was cancelled. */
  ended: (result: SpeedResult | undefined) => void;
}

/** The form's controls. */
const controls = () => ({ select: $<HTMLSelectElement>('#speed-mode'), choices: [...document.querySelectorAll<HTMLSelectElement>('#speed-form select')], start: $<HTMLButtonElement>('#speed-start'), cancel: $<HTMLButtonElement>('#speed-cancel'), error: $('#speed-error') });

/** The modes in the selector, the full test chosen when there is one, and the chosen mode's hint under it. */
function showModes(config: Configuration): void {
  const { select } = controls();
  select.replaceChildren(...config.modes.map((m) => option(m.id, modeName(m.id))));
  // The full test is the default: it measures every figure the page shows, in about 25 s at most.
  if (config.modes.some((m) => m.id === 'full')) select.value = 'full';
  const describe = () => {
    const mode = config.modes.find((m) => m.id === select.value);
    text('#speed-mode-hint', mode === undefined ? '' : modeHint(mode.id, mode.description));
  };
  select.addEventListener('change', describe);
  describe();
}

/**
 * The stream choice: multi (STREAMS parallel streams, the default) or single, one stream per
 * direction, as a person compares what one connection carries with what the link does.
 */
function showStreams(): void {
  $<HTMLSelectElement>('#speed-streams').replaceChildren(option('multi', t('speed.streams-multi', { count: num(STREAMS) })), option('single', t('speed.streams-single')));
}

/** The streams the form asks for. */
const chosenStreams = (): number => ($<HTMLSelectElement>('#speed-streams').value === 'single' ? 1 : STREAMS);

/** The last result's figures cleared and the form shown busy, as a test starts. */
function clearForRun(after: AfterTest): void {
  const { choices, start, cancel, error } = controls();
  error.hidden = true;
  after.share.offer(undefined);
  for (const name of ['download', 'upload', 'latency', 'loaded', 'bufferbloat', 'rpm', 'loss', 'classes']) metric(name, '–');
  const lossElement = $('#speed-results [data-metric="loss"]');
  delete lossElement.dataset.maxWaiting;
  delete lossElement.dataset.datagrams;
  delete lossElement.dataset.received;
  $('#speed-chart-figure').hidden = true;
  $('#speed-note').hidden = true;
  $('#speed-limit-note').hidden = true;
  $('#speed-verdict').hidden = true;
  start.disabled = true;
  for (const choice of choices) choice.disabled = true;
  cancel.hidden = false;
  text('#speed-status', t('speed.starting'));
}

type FailureReason = 'engine_error' | 'engine_load_error' | 'network_error' | 'cancelled' | 'timeout';

/** How a running test ends (finish, fail), watches for a stall, and what runs beside it until then. */
interface Life {
  /** The test ended, either way; the speed-test library's part is over. */
  readonly state: { settled: boolean; libraryDone: boolean };
  /** Aborts every request of the page's own load (cancel, stall, or the test over). */
  readonly load: AbortController;
  readonly live: Live;
  readonly lossWatch: LossWatch | undefined;
  library: SpeedTest | undefined;
  finish: () => void;
  fail: (reason: FailureReason, message: string) => void;
  /** Restarts the stall timer: progress was made (or a wait of `holdMs` begins, which is none). */
  watch: (holdMs?: number) => void;
}

function lifeOf(run: TestRun, turn: Turn): Life {
  const { choices, start, cancel, error } = controls();
  let stall: ReturnType<typeof setTimeout> | undefined;
  // The rate as it moves, five times a second, until the test ends (web/speedtest/live-view.ts).
  const live = startLive();
  $('#speed-live').hidden = false;
  const life: Life = {
    state: { settled: false, libraryDone: false },
    load: new AbortController(),
    live,
    // How the browser sent the loss step's messages, from its own statistics: whether the
    // figure is the network's (result-text.ts, lossUntrusted).
    lossWatch: turn.ok ? watchLossStep() : undefined,
    library: undefined,
    finish() {
      life.state.settled = true;
      live.stop();
      life.lossWatch?.stop();
      clearTimeout(stall);
      life.load.abort();
      start.disabled = false;
      for (const choice of choices) choice.disabled = false;
      cancel.hidden = true;
    },
    fail(reason, message) {
      if (life.state.settled) return;
      if (!life.state.libraryDone) life.library?.pause();
      life.finish();
      // One message per outcome: a cancel is said once, in the status; a failure is "did not
      // finish" with its reason as the error.
      if (reason === 'cancelled') text('#speed-status', message);
      else {
        text('#speed-status', t('speed.not-finished'));
        error.textContent = message;
        error.hidden = false;
      }
      sendEvent(run.config, 'speed_test_failed', run.eventId, { mode: run.mode.id, failure_reason: reason, duration_ms: Math.round(performance.now() - run.started) });
      run.ended(undefined);
    },
    watch(holdMs = 0) {
      clearTimeout(stall);
      stall = setTimeout(() => {
        life.fail('timeout', t('speed.stalled', { time: t('unit.s', { value: num(STALL_MS / 1000) }) }));
      }, holdMs + STALL_MS);
    },
  };
  return life;
}

/** The figures, by the page's rules (web/speedtest/speed-result.ts); then drawn, kept, shared and sent. */
function showDone(run: TestRun, runs: Partial<Record<LoadDirection, DirectionRun>>, idlePoints: number[], loss: Readings['loss'], waits: LimitWaits): void {
  const { config, mode, eventId, after } = run;
  const result = speedResult({ mode: mode.id, startedAt: run.startedAt, download: measuredOf(runs.download), upload: measuredOf(runs.upload), idle: idlePoints, loss });
  showResult(result, run.target.base);
  // The result says the test waited for the server's rate limit, and how long (the figures are after it).
  const limitNote = $('#speed-limit-note');
  limitNote.hidden = waits.count === 0;
  limitNote.textContent = waits.count === 0 ? '' : t('speed.limit-waited', { time: t('unit.s', { value: num(Math.round(waits.ms / 1000)) }) });
  // The answer takes the live figure's place; the rate over time is in the details (below).
  $('#speed-live').hidden = true;
  // Shown first, so the chart is drawn at its own width rather than a hidden figure's zero.
  $('#speed-chart-figure').hidden = runs.download === undefined && runs.upload === undefined;
  drawChart($('#speed-chart') as unknown as SVGSVGElement, { download: chartedOf(runs.download, result.shared.downloadBps), upload: chartedOf(runs.upload, result.shared.uploadBps) });
  text('#speed-status', t('speed.done'));
  const { server } = run.target;
  // The result names what it was measured against and with, for its link, the history and the export.
  const shared: SharedResult = { ...result.shared, streams: run.streams, ...(server === undefined ? {} : { server: server.name }), ...(run.family === undefined ? {} : { family: run.family }) };
  const record: FinishedTest = {
    eventId,
    config,
    shared,
    setup: { server: server === undefined ? null : { name: server.name, url: server.url, location: server.location }, origin: run.target.base, streams: run.streams, family: run.family ?? null },
    measured: { download: exportedOf(runs.download), upload: exportedOf(runs.upload) },
    roundTrips: { idle: idlePoints, loadedDown: windowMs(runs.download), loadedUp: windowMs(runs.upload) },
    loss: result.loss === undefined ? null : { sent: result.loss.sent, lost: result.loss.lost },
    classes: result.classes,
    bufferbloat: result.bufferbloat,
  };
  after.share.offer(record);
  // Into the history this browser keeps (web/results/history.ts); nothing of it is sent.
  after.keep(record.shared);
  // A metric the test could not measure is left out, not sent as null (AnalyticsProperties).
  sendEvent(config, 'speed_test_completed', eventId, completedProperties(result, mode.id, Math.round(performance.now() - run.started)));
  run.ended(result);
}

/**
 * The speed-test library's end: its errors (the packet-loss step's are the loss figure's, any other the
 * test's), and once it finished, the page's idle round trips and load, then the result.
 */
function onLibraryEnd(library: SpeedTest, run: TestRun, turn: Turn, life: Life): void {
  const { mode } = run;
  let lossError: string | undefined;
  // 1.14 calls onError for any failure but a 429 it gave up retrying, and then never finishes;
  // except the packet-loss step's, after which it goes on to the next step by itself.
  library.onError = (message: string, status?: number) => {
    // Its figures are taken once it finished: a late error of its own is not the load's.
    if (life.state.libraryDone) return;
    if (/packet loss/i.test(message)) {
      lossError = /timeout/i.test(message) ? t('loss.turn-timeout') : message;
      metric('loss', t('common.not-measured'), lossError);
      return;
    }
    life.fail(status === undefined ? 'network_error' : 'engine_error', t('speed.failed', { reason: message }));
  };
  library.onFinish = (results) => {
    if (life.state.settled || life.state.libraryDone) return;
    life.state.libraryDone = true;
    const lossDetails = turn.ok && lossError === undefined ? (results.getPacketLossDetails() as { numMessagesSent?: number; lostMessages?: number[] } | undefined) : undefined;
    // The watch's reading of the step's datagrams is in once the speed-test library has closed its connections.
    const sending = turn.ok && lossError === undefined ? life.lossWatch?.sending() : undefined;
    const idleCount = mode.measurements.reduce((n, m) => n + (m.type === 'latency' ? (m.packet_count ?? 1) : 0), 0);
    const waits: LimitWaits = { count: 0, ms: 0 };
    // A wait for the rate limit is said, and is no stall; a cancel ends it.
    const wait = async (seconds: number) => {
      life.watch(seconds * 1000);
      text('#speed-status', t('speed.waiting-limit', { time: t('unit.s', { value: num(seconds) }) }));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, seconds * 1000);
        life.load.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (life.load.signal.aborted) throw new DOMException('The test was cancelled.', 'AbortError');
    };
    const past: PastLimit = (step) => pastLimit(step, (err) => (err instanceof LoadRefused ? (err.retryAfterS ?? undefined) : null), waits, wait);
    Promise.resolve(sending)
      .then(async (seen) => {
        // The loss step is over: the browser's own RTCPeerConnection back while the load runs.
        life.lossWatch?.stop();
        const loss: Readings['loss'] = !turn.ok
          ? { run: false, why: turn.reason }
          : lossError !== undefined
            ? { run: true, error: lossError }
            : { run: true, ...stepLossCounts(lossDetails, seen), sending: seen };
        // The idle latency by the same method as the round trips under load (idleRoundTrips), then the load.
        const idle = await past(() => idleRoundTrips(new FetchLoadTransport(run.target.base), idleCount, life.load.signal));
        return { idle, loss, runs: await loadDirections(directionsOf(mode.measurements), { base: run.target.base, maxBytes: run.maxBytes, mode: mode.id, streams: run.streams }, life.load.signal, life.live, life.watch, past) };
      })
      .then(
        ({ idle, loss, runs }) => {
          if (life.state.settled) return;
          life.finish();
          showDone(run, runs, idle, loss, waits);
        },
        (err: unknown) => {
          // A cancel or a stall has already said why the test ended.
          if (life.state.settled) return;
          if (err instanceof LimitRefusal) {
            life.fail('engine_error', t('speed.limit-refused', { reason: err.message }));
            return;
          }
          const failure = loadFailure(err);
          life.fail(failure.reason, t('speed.failed', { reason: failure.message }));
        },
      );
  };
}

/** One test from its TURN credentials (or the reason there are none) to its end. */
function runTest(run: TestRun, turn: Turn): void {
  const life = lifeOf(run, turn);
  let library: SpeedTest;
  try {
    library = new SpeedTest({
      autoStart: false,
      downloadApiUrl: `${run.target.base}/__down`,
      uploadApiUrl: `${run.target.base}/__up`,
      // The speed-test library's defaults send results to its vendor; here none are sent anywhere.
      logAimApiUrl: null,
      logMeasurementApiUrl: null,
      measurements: libraryPlan(turn.ok),
      ...(turn.ok ? { turnServerUri: turn.hostPort, turnServerUser: turn.username, turnServerPass: turn.credential } : {}),
    });
  } catch (err) {
    life.state.libraryDone = true;
    life.fail('engine_load_error', t('speed.engine-start', { reason: err instanceof Error ? err.message : String(err) }));
    return;
  }
  life.library = library;
  sendEvent(run.config, 'speed_test_started', run.eventId, { mode: run.mode.id });
  controls().cancel.onclick = () => {
    life.fail('cancelled', t('speed.cancelled'));
  };
  // Progress is a round trip the speed-test library finished, or bytes the load counted.
  let finished = 0;
  library.onResultsChange = ({ type }) => {
    // The speed-test library can report after its end (each result is handed over on a timer of its own):
    // taken then, it would write its status over the load's, or over "Done.".
    if (life.state.settled || life.state.libraryDone) return;
    const now = library.results.getUnloadedLatencyPoints().length;
    if (now !== finished) {
      finished = now;
      life.watch();
    }
    // The speed-test library's one round trip starts it; its figure is not the page's (idleRoundTrips).
    text('#speed-status', t(type === 'latency' ? 'speed.measuring-latency' : 'speed.measuring-other'));
  };
  if (!turn.ok) metric('loss', t('common.not-measured'), turn.reason);
  onLibraryEnd(library, run, turn, life);
  life.watch();
  library.play();
}

/**
 * The chosen server's configuration (its modes and per-request limit): this page's own when it is
 * this origin, else asked of it, a problem said with its name.
 */
async function targetConfiguration(target: Target, own: Configuration): Promise<{ ok: true; config: Configuration } | { ok: false; message: string }> {
  if (target.base === location.origin) return { ok: true, config: own };
  const res = await api<Configuration>(`${target.base}/v1/speed-test/configuration`);
  if (res.ok) return { ok: true, config: res.data };
  return { ok: false, message: t('speed.server-failed', { server: target.server === undefined ? target.base : serverLabel(target.server), reason: problemText(res.problem) }) };
}

/** The form given back with no test running: Start and the choices usable, Cancel gone. */
function formBack(): void {
  const { choices, start, cancel } = controls();
  start.disabled = false;
  for (const choice of choices) choice.disabled = false;
  cancel.hidden = true;
}

/** The form given back after a test that could not start, saying why. */
function notStarted(message: string): void {
  formBack();
  const { error } = controls();
  text('#speed-status', t('speed.not-finished'));
  error.textContent = message;
  error.hidden = false;
}

/**
 * Cancel before a test starts, while "Nearest" is timed (up to NEAREST_TIMEOUT_MS) or the server's
 * configuration and TURN credentials are asked: the form is given back at once, and what is still
 * waiting for an answer is told (the function returned) that no test is to start.
 */
function cancelBeforeStart(): () => boolean {
  const stop = new AbortController();
  controls().cancel.onclick = () => {
    stop.abort();
    formBack();
    text('#speed-status', t('speed.cancelled'));
  };
  return () => stop.signal.aborted;
}

export async function runSpeedTest(after: AfterTest, servers: Promise<ServerChoice>): Promise<void> {
  const [res, choice] = await Promise.all([api<Configuration>('/v1/speed-test/configuration'), servers]);
  // A family chosen measures this deployment's family origins, so the server choice is set aside meanwhile.
  const families = setUpFamilies((chosen) => {
    choice.hold(chosen);
  });
  const { select, start, error } = controls();
  if (!res.ok) {
    error.textContent = t('speed.unavailable', { reason: problemText(res.problem) });
    error.hidden = false;
    start.disabled = true;
    return;
  }
  const config = res.data;
  showModes(config);
  showStreams();
  $<HTMLFormElement>('#speed-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const modeId = select.value;
    const streams = chosenStreams();
    const familyRuns = families.runs();
    clearForRun(after);
    showFamilyFigures([]);
    /** One test against the target `find` gives, to its end: its result, or undefined when it did not finish or was cancelled first. */
    const testAgainst = async (find: () => Promise<Target>, family: Family | undefined): Promise<SpeedResult | undefined> => {
      const cancelled = cancelBeforeStart();
      const target = await find();
      if (cancelled()) return undefined;
      // The server's configuration first; packet loss needs its TURN server: credentials, or the
      // reason it cannot run.
      const chosen = await targetConfiguration(target, config);
      if (cancelled()) return undefined;
      if (!chosen.ok) {
        notStarted(chosen.message);
        return undefined;
      }
      const mode = chosen.config.modes.find((m) => m.id === modeId);
      if (mode === undefined) {
        notStarted(t('speed.server-failed', { server: target.server === undefined ? target.base : serverLabel(target.server), reason: t('speed.server-no-mode', { mode: modeName(modeId) }) }));
        return undefined;
      }
      const maxBytes = chosen.config.limits.max_bytes_per_request ?? 0;
      const turn = await turnFor(target);
      if (cancelled()) return undefined;
      return new Promise((ended) => {
        runTest({ config, target, mode, maxBytes, eventId: uuidV4(), started: performance.now(), startedAt: Date.now(), streams, family, after, ended }, turn);
      });
    };
    void (async () => {
      // No family chosen: the server chosen ("Nearest" timed now), over whichever family the browser picks.
      if (familyRuns.length === 0) {
        await testAgainst(() => choice.target(), undefined);
        return;
      }
      // Each family chosen, one after the other against this deployment's origin for it; a failure or a cancel ends them.
      const results: { family: Family; result: SpeedResult }[] = [];
      for (const [i, { family, base }] of familyRuns.entries()) {
        if (i > 0) clearForRun(after);
        const result = await testAgainst(() => Promise.resolve({ base, server: undefined }), family);
        if (result === undefined) return;
        results.push({ family, result });
      }
      if (results.length > 1) showFamilyFigures(results);
    })();
  });
  // Start comes in disabled (index.html): before this handler, a click would submit the form as a
  // navigation, reloading the page; usable now, once the configuration (and the nearest server) is known.
  start.disabled = false;
}
