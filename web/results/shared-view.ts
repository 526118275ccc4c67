// A shared result, opened from a link whose fragment carries it (`#r=…`, src/common/speedtest/share.ts):
// shown read-only, labelled as a shared copy with its date and mode, beside an offer to run a new
// test. The fragment never reaches the server; this page reads it where it is, in the browser.
import { bufferbloat, worseLoaded } from '../../src/common/speedtest/bufferbloat.js';
import { decodeResult, type SharedResult } from '../../src/common/speedtest/share.js';
import { $, showFigure, text } from '../ui/dom.js';
import { dateTime, t } from '../i18n/locale.js';
import { bloatText, formatMbps, formatMs, loadedText, lossText, rpmText, setupParts } from '../speedtest/result-text.js';

/** Each figure by the result's own formatters (web/speedtest/result-text.ts), so the copy reads as the original did. */
function figure(name: string, value: string): void {
  showFigure($(`#shared-results [data-metric="${name}"]`), value);
}

function show(result: SharedResult): void {
  const when = dateTime(result.at, { dateStyle: 'medium', timeStyle: 'short' });
  text('#shared-label', t('shared.label', { mode: t(result.mode === 'light' ? 'speed.mode-light' : 'speed.mode-full'), when }));
  const setup = setupParts(result);
  const setupLine = $('#shared-setup');
  setupLine.hidden = setup.length === 0;
  setupLine.textContent = setup.length === 0 ? '' : t('shared.setup', { setup: setup.join(t('list.separator')) });
  const NOT_MEASURED = t('common.not-measured');
  const ms = (v: number | undefined) => (v === undefined ? NOT_MEASURED : formatMs(v));
  figure('download', result.downloadBps === undefined ? NOT_MEASURED : formatMbps(result.downloadBps));
  figure('upload', result.uploadBps === undefined ? NOT_MEASURED : formatMbps(result.uploadBps));
  figure('latency', ms(result.latencyMs));
  figure('jitter', ms(result.jitterMs));
  const loaded = worseLoaded(result.loadedDownMs, result.loadedUpMs);
  figure('loaded', loaded === undefined ? NOT_MEASURED : loadedText(result.loadedDownMs, result.loadedUpMs));
  const bloat = bufferbloat(result.latencyMs, loaded);
  figure('bufferbloat', bloat === undefined ? NOT_MEASURED : bloatText(bloat));
  figure('rpm', result.rpm === undefined ? NOT_MEASURED : rpmText(result.rpm));
  figure('loss', result.lossPercent === undefined ? NOT_MEASURED : lossText(result.lossPercent));
  const address = $('#shared-address');
  address.hidden = result.address === undefined;
  figure('address', result.address ?? '');
  $('#shared-results').hidden = false;
}

/** Shows the result a link carries, or says the link does not decode; nothing without `#r=`. */
export function showShared(): void {
  const hash = location.hash;
  if (!hash.startsWith('#r=')) return;
  $('#shared').hidden = false;
  const decoded = decodeResult(hash.slice(3));
  if (decoded.ok) show(decoded.result);
  else {
    const error = $('#shared-error');
    error.textContent = t('shared.unreadable', { reason: decoded.reason });
    error.hidden = false;
  }
}
