// The speed test: the engine the configuration names (@cloudflare/speedtest, bundled), run in
// the mode the user picks against this server's /__down and /__up, with the analytics events
// the configuration advertises and nothing else (the API contract; docs/api.md, "Envelope, routes and limits").
import SpeedTest from '@cloudflare/speedtest';
import type { Schemas } from '../src/generated/openapi-types.js';
import { $, api, problemText, showFigure, text } from './dom.js';
import { drawChart } from './chart.js';
import { bloatText, browserLimitNote, burstText, classesWaitFor, verdictLine, formatMbps, formatMs, loadedText, lossText, lossUntrusted, noLoadedLatency, spread, timedTransfers, worseLoaded, type Classes, type Spread } from './report.js';
import { watchLossStep, type LossWatch } from './loss-watch.js';
import { uuidV4 } from './uuid.js';
import { sendEvent } from './events.js';
import { bufferbloat } from '../src/speedtest/bufferbloat.js';
import { LOADED_REQUEST_MIN_MS, MIN_BANDWIDTH_REQUEST_MS, qualities, type Bandwidth, type Quality } from '../src/speedtest/metrics.js';
import { directionRates, type Burst } from '../src/speedtest/burst.js';
import { sharedBps, sharedMs } from '../src/speedtest/share.js';
import { offerShare, type RunRecord } from './share.js';
import { keepResult } from './history-view.js';
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
  if (document.documentElement.dataset.turn !== 'on') return { ok: false, reason: 'this server has no TURN server to measure it through' };
  if (typeof RTCPeerConnection === 'undefined') return { ok: false, reason: 'this browser has WebRTC turned off' };
  const res = await api<Schemas['TurnCredentials']>('/v1/speed-test/turn-credentials');
  if (!res.ok) return { ok: false, reason: res.problem.status === 404 ? 'this server has no TURN server to measure it through' : problemText(res.problem) };
  const url = res.data.urls[0] ?? '';
  const match = /^turn:([^?]+)(?:\?transport=udp)?$/.exec(url);
  if (match === null) return { ok: false, reason: `the TURN server (${url}) is not reachable over plain UDP, which the engine needs` };
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

/** A rate, with the burst before it under it when the link gave one (its exact figures in `data-burst-*`). */
const rate = (name: 'download' | 'upload', b: Bandwidth | undefined, burst: Burst | undefined): void => {
  const how = b === undefined ? 'no transfer was timed' : basis(b);
  metric(name, formatMbps(b?.bps), burst === undefined ? how : `${burstText(burst)}; sustained: ${how}`, b?.bps);
  if (burst === undefined) return;
  const element = $(`#speed-results [data-metric="${name}"]`);
  element.dataset.burstPeak = String(burst.peakBps);
  element.dataset.burstBytes = String(burst.bytes);
};

const NOT_MEASURED = 'not measured';
/** Measured, but what was counted is not the network's loss, and the detail says why. */
const NOT_TRUSTWORTHY = 'not trustworthy';

/** min, p90 and jitter of a set of round trips, in words. */
const spreadText = (s: Spread, what: string): string =>
  `min ${formatMs(s.min)}, p90 ${formatMs(s.p90)}${s.jitter === null ? '' : `, jitter ${formatMs(s.jitter)}`}; ${String(s.count)} ${what}`;

/**
 * How a rate was reached: the engine's rule, the 90th percentile of transfers of 10 ms or more
 * (shorter ones say more about timers and a shaper's burst than the link: with a 256 kB tbf bucket
 * on a 20 Mbit/s link, counting transfers of 1 ms read 136-302 Mbit/s); or, next to the server,
 * where every transfer is shorter, all of them, said as such.
 */
const basis = (b: Bandwidth): string => {
  const least = `${String(MIN_BANDWIDTH_REQUEST_MS)} ms`;
  if (b.shortRequestsOnly) return `all ${String(b.counted)} transfers, each under ${least} (next to the server): a rough figure`;
  return b.counted === 1 ? `the one transfer of ${least} or more` : `90th percentile of ${String(b.counted)} transfers of ${least} or more`;
};

const CLASS_NAMES: [keyof Classes, string][] = [['streaming', 'streaming'], ['gaming', 'gaming'], ['videoCall', 'video calls']];

export async function runSpeedTest(): Promise<void> {
  const res = await api<Configuration>('/v1/speed-test/configuration');
  const form = $<HTMLFormElement>('#speed-form');
  const select = $<HTMLSelectElement>('#speed-mode');
  const start = $<HTMLButtonElement>('#speed-start');
  const cancel = $<HTMLButtonElement>('#speed-cancel');
  const error = $('#speed-error');
  if (!res.ok) {
    error.textContent = `The speed test is unavailable: ${problemText(res.problem)}`;
    error.hidden = false;
    start.disabled = true;
    return;
  }
  const config = res.data;
  select.replaceChildren(
    ...config.modes.map((m) => {
      const option = document.createElement('option');
      option.value = m.id;
      option.textContent = m.id;
      return option;
    }),
  );
  // The full test is the default: it measures every figure the page shows, in about 25 s at most.
  if (config.modes.some((m) => m.id === 'full')) select.value = 'full';
  const describe = () => {
    text('#speed-mode-hint', config.modes.find((m) => m.id === select.value)?.description ?? '');
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
    offerShare(undefined);
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
    text('#speed-status', 'Starting…');

    // Packet loss needs the deployment's TURN server: credentials first, or the reason it cannot run.
    void turnFor().then((turn) => {
      let engine: SpeedTest;
      let settled = false;
      let stall: ReturnType<typeof setTimeout> | undefined;
      // How the browser sent the loss step's messages, from its own statistics: whether the
      // figure is the network's (report.ts, lossUntrusted).
      const lossWatch: LossWatch | undefined = turn.ok ? watchLossStep() : undefined;
      // The rate as it moves, four times a second, until the test ends (web/live-view.ts).
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
        text('#speed-status', 'The test did not finish.');
        error.textContent = message;
        error.hidden = false;
        sendEvent(config, 'speed_test_failed', eventId, { mode: mode.id, failure_reason: reason, duration_ms: Math.round(performance.now() - started) });
      };
      const watch = () => {
        clearTimeout(stall);
        stall = setTimeout(() => {
          engine.pause();
          fail('timeout', `No progress for ${String(STALL_MS / 1000)} s; the test was stopped.`);
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
        fail('engine_load_error', `The speed-test engine could not start: ${err instanceof Error ? err.message : String(err)}`);
        return;
      }
      sendEvent(config, 'speed_test_started', eventId, { mode: mode.id });
      cancel.onclick = () => {
        engine.pause();
        fail('cancelled', 'The test was cancelled.');
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
        text('#speed-status', `Measuring ${type}…`);
        if (type === 'download') metric('download', formatMbps(directionRates(timedTransfers(r.getDownloadBandwidthPoints(), 'download')).sustained?.bps));
        if (type === 'upload') metric('upload', formatMbps(directionRates(timedTransfers(r.getUploadBandwidthPoints(), 'upload')).sustained?.bps));
        if (type === 'latency') {
          const latency = r.getUnloadedLatency();
          if (latency !== undefined) metric('latency', formatMs(latency));
        }
      };
      if (!turn.ok) metric('loss', NOT_MEASURED, turn.reason);
      let lossError: string | undefined;
      // 1.14 calls onError for any failure but a 429 it gave up retrying, and then never finishes;
      // except the packet-loss step's, after which it goes on to the next step by itself.
      engine.onError = (message: string, status?: number) => {
        if (/packet loss/i.test(message)) {
          lossError = /timeout/i.test(message) ? 'the TURN server did not answer within 5 s (UDP blocked by a firewall or a VPN?)' : message;
          metric('loss', NOT_MEASURED, lossError);
          return;
        }
        engine.pause();
        fail(status === undefined ? 'network_error' : 'engine_error', `The test failed: ${message}`);
      };
      engine.onFinish = (results) => {
        if (settled) return;
        finish();
        const mbps = (bps: number | undefined) => (bps === undefined ? undefined : Math.round((bps / 1e6) * 100) / 100);
        const ms = (v: number | undefined) => (v === undefined ? undefined : Math.round(v * 100) / 100);
        const downPoints = results.getDownloadBandwidthPoints();
        const upPoints = results.getUploadBandwidthPoints();
        // Figures at the precision a share link keeps (src/speedtest/share.ts), so a shared copy
        // reads exactly as this page does.
        const atLink = (b: Bandwidth | undefined): Bandwidth | undefined => (b === undefined ? undefined : { ...b, bps: sharedBps(b.bps) });
        // The rate each direction sustains, and the burst before it if the link gave one
        // (src/speedtest/burst.ts, the command line's rules).
        const downRates = directionRates(timedTransfers(downPoints, 'download'));
        const upRates = directionRates(timedTransfers(upPoints, 'upload'));
        const down = atLink(downRates.sustained);
        const up = atLink(upRates.sustained);
        rate('download', down, downRates.burst);
        rate('upload', up, upRates.burst);
        const idlePoints = results.getUnloadedLatencyPoints();
        // Medians and jitter at a link's precision, as the rates above.
        const atLinkMs = (x: Spread | undefined): Spread | undefined => (x === undefined ? undefined : { ...x, median: sharedMs(x.median), jitter: x.jitter === null ? null : sharedMs(x.jitter) });
        const idle = atLinkMs(spread(idlePoints));
        if (idle === undefined) metric('latency', NOT_MEASURED, 'no round trip was timed');
        else metric('latency', formatMs(idle.median), spreadText(idle, 'round trips'), idle.median);
        // The engine answers 0 for a loaded latency it has no round trip for: its points say whether it has any.
        const loadedDownPoints = results.getDownLoadedLatencyPoints();
        const loadedUpPoints = results.getUpLoadedLatencyPoints();
        const loadedDown = atLinkMs(spread(loadedDownPoints));
        const loadedUp = atLinkMs(spread(loadedUpPoints));
        const loaded = worseLoaded(loadedDown?.median, loadedUp?.median);
        if (loaded === undefined) metric('loaded', NOT_MEASURED, noLoadedLatency(mode.id));
        else {
          const p90 = (x: Spread | undefined, dir: string) => (x === undefined ? `${dir}: no ${dir === 'up' ? 'upload' : 'download'} lasted ${String(LOADED_REQUEST_MIN_MS)} ms` : `${dir} p90 ${formatMs(x.p90)} of ${String(x.count)}`);
          metric(
            'loaded',
            loadedText(loadedDown?.median, loadedUp?.median),
            `${p90(loadedDown, 'down')}; ${p90(loadedUp, 'up')}`,
            loaded,
          );
        }
        const bloat = bufferbloat(idle?.median, loaded);
        if (bloat === undefined) metric('bufferbloat', NOT_MEASURED, 'it is the latency under load less the idle one, and there is no latency under load');
        else metric('bufferbloat', bloatText(bloat), bloat.meaning, bloat.increaseMs);
        let lossMeasured: { sent: number; lost: number; percent: number } | undefined;
        if (turn.ok && lossError === undefined) {
          const loss = results.getPacketLossDetails() as { numMessagesSent?: number; lostMessages?: number[] } | undefined;
          const sent = loss?.numMessagesSent ?? 0;
          const lost = loss?.lostMessages?.length ?? 0;
          const sending = lossWatch?.sending();
          const untrusted = sending === undefined ? undefined : lossUntrusted(sending, lost);
          // What the trust rule read, for scripts and tests: the most messages that waited in the
          // browser at once and the datagrams its transport sent over the step.
          const element = $('#speed-results [data-metric="loss"]');
          element.dataset.maxWaiting = sending === undefined ? '' : String(sending.maxWaiting);
          element.dataset.datagrams = sending?.datagrams === undefined ? '' : String(sending.datagrams);
          if (sent === 0) metric('loss', NOT_MEASURED, 'the packet-loss step sent nothing');
          // No number: the count would be the browser's bundling more than the network's loss.
          else if (untrusted !== undefined) metric('loss', NOT_TRUSTWORTHY, untrusted);
          else {
            // To the hundredth of a percent, as a share link keeps it.
            lossMeasured = { sent, lost, percent: Math.round((10_000 * lost) / sent) / 100 };
            metric('loss', lossText(lossMeasured.percent), `${String(lost)} of ${String(sent)} datagrams through this server's TURN server`, (100 * lost) / sent);
          }
        }
        const lossShare = lossMeasured === undefined ? undefined : lossMeasured.lost / lossMeasured.sent;
        const q = qualities({ download: down?.bps, upload: up?.bps, latency: idle?.median, jitter: idle?.jitter ?? undefined, downLoadedLatency: loadedDown?.median, upLoadedLatency: loadedUp?.median, packetLoss: lossShare });
        const known = (c: Quality | 'pending') => (c === 'pending' ? undefined : c);
        const classes: Classes = { streaming: known(q.streaming), gaming: known(q.gaming), videoCall: known(q.video_call) };
        const waiting = classesWaitFor(classes, idle !== undefined, loaded !== undefined, mode.id);
        // The answer first: what the connection is good for, in one line above the figures.
        const answer = verdictLine(classes, bloat);
        const verdictElement = $('#speed-verdict');
        verdictElement.textContent = answer ?? '';
        verdictElement.hidden = answer === undefined;
        metric('classes', waiting === undefined ? CLASS_NAMES.map(([key, name]) => `${name} ${classes[key] ?? 'pending'}`).join(', ') : 'pending', waiting);
        const note = browserLimitNote(down?.bps, up?.bps, location.origin);
        $('#speed-note').hidden = note === undefined;
        text('#speed-note', note ?? '');
        // Shown first, so the chart is drawn at its own width rather than a hidden figure's zero.
        $('#speed-chart-figure').hidden = downPoints.length + upPoints.length === 0;
        drawChart($('#speed-chart') as unknown as SVGSVGElement, { download: downPoints, upload: upPoints, reported: { download: down?.bps, upload: up?.bps } });
        text('#speed-status', 'Done.');
        const record: RunRecord = {
          eventId,
          config,
          shared: {
            at: startedAt,
            mode: mode.id === 'light' ? 'light' : 'full',
            downloadBps: down?.bps,
            uploadBps: up?.bps,
            latencyMs: idle?.median,
            jitterMs: idle?.jitter ?? undefined,
            loadedDownMs: loadedDown?.median,
            loadedUpMs: loadedUp?.median,
            lossPercent: lossMeasured?.percent,
          },
          transfers: { download: downPoints, upload: upPoints },
          roundTrips: { idle: idlePoints, loadedDown: loadedDownPoints, loadedUp: loadedUpPoints },
          loss: lossMeasured === undefined ? null : { sent: lossMeasured.sent, lost: lossMeasured.lost },
          classes: { streaming: q.streaming, gaming: q.gaming, video_call: q.video_call },
          bufferbloat: bloat === undefined ? null : { grade: bloat.grade, increase_ms: bloat.increaseMs },
        };
        offerShare(record);
        // Into the history this browser keeps (web/history.ts); nothing of it is sent.
        keepResult(record.shared);
        const properties: Record<string, string | number | undefined> = {
          mode: mode.id,
          duration_ms: Math.round(performance.now() - started),
          download_mbps: mbps(down?.bps),
          upload_mbps: mbps(up?.bps),
          latency_ms: ms(idle?.median),
          jitter_ms: ms(idle?.jitter ?? undefined),
          streaming_quality: q.streaming,
          gaming_quality: q.gaming,
          video_call_quality: q.video_call,
        };
        // A metric the engine could not measure is left out, not sent as null (AnalyticsProperties).
        sendEvent(config, 'speed_test_completed', eventId, Object.fromEntries(Object.entries(properties).filter(([, v]) => v !== undefined)));
      };
      watch();
      engine.play();
    });
  });
}
