// The speed test: the engine the configuration names (@cloudflare/speedtest, bundled), run in
// the mode the user picks against this server's /__down and /__up, with the analytics events
// the configuration advertises and nothing else (the API contract; docs/api.md, "Envelope, routes and limits").
import SpeedTest from '@cloudflare/speedtest';
import type { Schemas } from '../src/generated/openapi-types.js';
import { $, api, problemText, showFigure, text } from './dom.js';
import { drawChart } from './chart.js';
import { browserLimitNote, formatMbps, formatMs, exportedTransfers, timedTransfers } from './report.js';
import { watchLossStep, type LossWatch } from './loss-watch.js';
import { uuidV4 } from './uuid.js';
import { sendEvent } from './events.js';
import { directionRates } from '../src/common/speedtest/burst.js';
import type { RunRecord, ShareOffer } from './share.js';
import type { SharedResult } from '../src/common/speedtest/share.js';
import { speedResult, type SpeedResult } from './speed-result.js';
import { num, t } from './i18n/locale.js';
import { startLive } from './live-view.js';

// The configuration as the contract (openapi/openapi.yaml) defines it.
type Configuration = Schemas['SpeedTestConfiguration'];
type Measurement = Schemas['SpeedTestMeasurement'];

/** A test that stops making progress for this long is given up as `timeout`. */
const STALL_MS = 60_000;

/**
 * The engine's packet-loss step as its own defaults have it (1000 datagrams in batches of 10
 * every 10 ms, 3 s for stragglers), run last, when this deployment has a TURN server.
 */
const PACKET_LOSS_STEP = { type: 'packetLoss' as const, numPackets: 1000, batchSize: 10, batchWaitTime: 10, responsesWaitTime: 3000 };

/** The v1 plan in the engine's own terms, with its packet-loss step when there is a TURN server (its RPKI step never). */
function enginePlan(measurements: Measurement[], withLoss: boolean) {
  const plan = measurements.map((m) =>
    m.type === 'latency'
      ? ({ type: 'latency' as const, numPackets: m.packet_count ?? 1 })
      : ({ type: m.type, bytes: m.bytes_per_request ?? 0, count: m.request_count ?? 1 }),
  );
  return withLoss ? [...plan, PACKET_LOSS_STEP] : plan;
}

type Turn = { ok: true; hostPort: string; username: string; credential: string } | { ok: false; reason: string };

/**
 * Credentials for the deployment's TURN server, or why packet loss cannot be measured. The engine
 * takes `host:port` and always asks for UDP (`turn:<host:port>?transport=udp`), so a `turns:` or
 * TCP-only server is out of its reach; WebRTC turned off is said as such.
 */
async function turnFor(): Promise<Turn> {
  if (document.documentElement.dataset.turn !== 'on') return { ok: false, reason: t('loss.no-turn') };
  if (typeof RTCPeerConnection === 'undefined') return { ok: false, reason: t('loss.no-webrtc') };
  const res = await api<Schemas['TurnCredentials']>('/v1/speed-test/turn-credentials');
  if (!res.ok) return { ok: false, reason: res.problem.status === 404 ? t('loss.no-turn') : problemText(res.problem) };
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

/** A finished test's figures drawn into the page, the verdict line above them. */
function showResult(result: SpeedResult): void {
  for (const [name, figure] of Object.entries(result.figures)) {
    metric(name, figure.value, figure.detail, figure.exact);
    if (figure.burst === undefined) continue;
    const element = $(`#speed-results [data-metric="${name}"]`);
    element.dataset.burstPeak = String(figure.burst.peakBps);
    element.dataset.burstBytes = String(figure.burst.bytes);
  }
  // What the loss rule read, for scripts and tests: the most messages that waited in the browser
  // at once and the datagrams its transport sent over the step.
  if (result.lossCounted) {
    const loss = $('#speed-results [data-metric="loss"]');
    loss.dataset.maxWaiting = result.lossSending === undefined ? '' : String(result.lossSending.maxWaiting);
    loss.dataset.datagrams = result.lossSending?.datagrams === undefined ? '' : String(result.lossSending.datagrams);
  }
  const verdict = $('#speed-verdict');
  verdict.textContent = result.verdict ?? '';
  verdict.hidden = result.verdict === undefined;
  const note = browserLimitNote(result.shared.downloadBps, result.shared.uploadBps, location.origin);
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

export async function runSpeedTest(after: AfterTest): Promise<void> {
  const res = await api<Configuration>('/v1/speed-test/configuration');
  const form = $<HTMLFormElement>('#speed-form');
  const select = $<HTMLSelectElement>('#speed-mode');
  const start = $<HTMLButtonElement>('#speed-start');
  const cancel = $<HTMLButtonElement>('#speed-cancel');
  const error = $('#speed-error');
  if (!res.ok) {
    error.textContent = t('speed.unavailable', { reason: problemText(res.problem) });
    error.hidden = false;
    start.disabled = true;
    return;
  }
  const config = res.data;
  select.replaceChildren(
    ...config.modes.map((m) => {
      const option = document.createElement('option');
      option.value = m.id;
      option.textContent = modeName(m.id);
      return option;
    }),
  );
  // The full test is the default: it measures every figure the page shows, in about 25 s at most.
  if (config.modes.some((m) => m.id === 'full')) select.value = 'full';
  const describe = () => {
    const mode = config.modes.find((m) => m.id === select.value);
    text('#speed-mode-hint', mode === undefined ? '' : modeHint(mode.id, mode.description));
  };
  select.addEventListener('change', describe);
  describe();

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const mode = config.modes.find((m) => m.id === select.value);
    if (mode === undefined) return;
    const eventId = uuidV4();
    const started = performance.now();
    const startedAt = Date.now();
    error.hidden = true;
    after.share.offer(undefined);
    for (const name of ['download', 'upload', 'latency', 'loaded', 'bufferbloat', 'loss', 'classes']) metric(name, '–');
    const lossElement = $('#speed-results [data-metric="loss"]');
    delete lossElement.dataset.maxWaiting;
    delete lossElement.dataset.datagrams;
    $('#speed-chart-figure').hidden = true;
    $('#speed-note').hidden = true;
    $('#speed-verdict').hidden = true;
    start.disabled = true;
    select.disabled = true;
    cancel.hidden = false;
    text('#speed-status', t('speed.starting'));

    // Packet loss needs the deployment's TURN server: credentials first, or the reason it cannot run.
    void turnFor().then((turn) => {
      let engine: SpeedTest;
      let settled = false;
      let stall: ReturnType<typeof setTimeout> | undefined;
      // How the browser sent the loss step's messages, from its own statistics: whether the
      // figure is the network's (report.ts, lossUntrusted).
      const lossWatch: LossWatch | undefined = turn.ok ? watchLossStep() : undefined;
      // The rate as it moves, five times a second, until the test ends (web/live-view.ts).
      const live = startLive();
      $('#speed-live').hidden = false;
      const finish = () => {
        settled = true;
        live.stop();
        lossWatch?.stop();
        clearTimeout(stall);
        start.disabled = false;
        select.disabled = false;
        cancel.hidden = true;
      };
      const fail = (reason: 'engine_error' | 'engine_load_error' | 'network_error' | 'cancelled' | 'timeout', message: string) => {
        if (settled) return;
        finish();
        text('#speed-status', t('speed.not-finished'));
        error.textContent = message;
        error.hidden = false;
        sendEvent(config, 'speed_test_failed', eventId, { mode: mode.id, failure_reason: reason, duration_ms: Math.round(performance.now() - started) });
      };
      const watch = () => {
        clearTimeout(stall);
        stall = setTimeout(() => {
          engine.pause();
          fail('timeout', t('speed.stalled', { time: t('unit.s', { value: num(STALL_MS / 1000) }) }));
        }, STALL_MS);
      };

      try {
        engine = new SpeedTest({
          autoStart: false,
          downloadApiUrl: '/__down',
          uploadApiUrl: '/__up',
          // The engine's defaults send results to its vendor; nothing leaves this origin here.
          logAimApiUrl: null,
          logMeasurementApiUrl: null,
          measurements: enginePlan(mode.measurements, turn.ok),
          ...(turn.ok ? { turnServerUri: turn.hostPort, turnServerUser: turn.username, turnServerPass: turn.credential } : {}),
        });
      } catch (err) {
        fail('engine_load_error', t('speed.engine-start', { reason: err instanceof Error ? err.message : String(err) }));
        return;
      }
      sendEvent(config, 'speed_test_started', eventId, { mode: mode.id });
      cancel.onclick = () => {
        engine.pause();
        fail('cancelled', t('speed.cancelled'));
      };
      // Progress is a finished transfer or round trip. The round trips taken while a transfer runs
      // change the results too, so a transfer that hangs while they go on would never be given up.
      let finished = 0;
      engine.onResultsChange = ({ type }) => {
        // The engine can report after its end: a transfer step's side pings are paused on a timer
        // after the step's last transfer, and each result is handed over on a timer of its own, so
        // a ping answered together with the last upload (on a real link its request waits in the
        // upload queue behind the upload's tail) arrives after onFinish. Taken, it wrote
        // "Measuring upload…" over "Done." and the running upload figure over the final one, with
        // the stall check already stopped: the run never ended for whoever watched it.
        if (settled) return;
        const r = engine.results;
        const now = r.getDownloadBandwidthPoints().length + r.getUploadBandwidthPoints().length + r.getUnloadedLatencyPoints().length;
        if (now !== finished) {
          finished = now;
          watch();
        }
        text('#speed-status', t(type === 'download' ? 'speed.measuring-download' : type === 'upload' ? 'speed.measuring-upload' : type === 'latency' ? 'speed.measuring-latency' : 'speed.measuring-other'));
        if (type === 'download') metric('download', formatMbps(directionRates(timedTransfers(r.getDownloadBandwidthPoints(), 'download')).sustained?.bps));
        if (type === 'upload') metric('upload', formatMbps(directionRates(timedTransfers(r.getUploadBandwidthPoints(), 'upload')).sustained?.bps));
        if (type === 'latency') {
          const latency = r.getUnloadedLatency();
          if (latency !== undefined) metric('latency', formatMs(latency));
        }
      };
      if (!turn.ok) metric('loss', t('common.not-measured'), turn.reason);
      let lossError: string | undefined;
      // 1.14 calls onError for any failure but a 429 it gave up retrying, and then never finishes;
      // except the packet-loss step's, after which it goes on to the next step by itself.
      engine.onError = (message: string, status?: number) => {
        if (/packet loss/i.test(message)) {
          lossError = /timeout/i.test(message) ? t('loss.turn-timeout') : message;
          metric('loss', t('common.not-measured'), lossError);
          return;
        }
        engine.pause();
        fail(status === undefined ? 'network_error' : 'engine_error', t('speed.failed', { reason: message }));
      };
      engine.onFinish = (results) => {
        if (settled) return;
        finish();
        const downPoints = results.getDownloadBandwidthPoints();
        const upPoints = results.getUploadBandwidthPoints();
        const idlePoints = results.getUnloadedLatencyPoints();
        const loadedDownPoints = results.getDownLoadedLatencyPoints();
        const loadedUpPoints = results.getUpLoadedLatencyPoints();
        const lossDetails = turn.ok && lossError === undefined ? (results.getPacketLossDetails() as { numMessagesSent?: number; lostMessages?: number[] } | undefined) : undefined;
        // The figures, by the page's rules (web/speed-result.ts); then drawn, kept, shared and sent.
        const result = speedResult({
          mode: mode.id,
          startedAt,
          download: downPoints,
          upload: upPoints,
          idle: idlePoints,
          loadedDown: loadedDownPoints,
          loadedUp: loadedUpPoints,
          loss: !turn.ok
            ? { run: false, why: turn.reason }
            : lossError !== undefined
              ? { run: true, error: lossError }
              : { run: true, sent: lossDetails?.numMessagesSent ?? 0, lost: lossDetails?.lostMessages?.length ?? 0, sending: lossWatch?.sending() },
        });
        showResult(result);
        // Shown first, so the chart is drawn at its own width rather than a hidden figure's zero.
        $('#speed-chart-figure').hidden = downPoints.length + upPoints.length === 0;
        drawChart($('#speed-chart') as unknown as SVGSVGElement, { download: downPoints, upload: upPoints, reported: { download: result.shared.downloadBps, upload: result.shared.uploadBps } });
        text('#speed-status', t('speed.done'));
        const record: RunRecord = {
          eventId,
          config,
          shared: result.shared,
          transfers: { download: exportedTransfers(downPoints, 'download'), upload: exportedTransfers(upPoints, 'upload') },
          roundTrips: { idle: idlePoints, loadedDown: loadedDownPoints, loadedUp: loadedUpPoints },
          loss: result.loss === undefined ? null : { sent: result.loss.sent, lost: result.loss.lost },
          classes: result.classes,
          bufferbloat: result.bufferbloat,
        };
        after.share.offer(record);
        // Into the history this browser keeps (web/history.ts); nothing of it is sent.
        after.keep(record.shared);
        // A metric the engine could not measure is left out, not sent as null (AnalyticsProperties).
        sendEvent(config, 'speed_test_completed', eventId, completedProperties(result, mode.id, Math.round(performance.now() - started)));
      };
      watch();
      engine.play();
    });
  });
}
