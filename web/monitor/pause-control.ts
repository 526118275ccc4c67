// The page's pause control (docs/monitor.md, "Pausing"): pause every check for a chosen time, or
// resume. The monitor takes the page's POST only with the CSRF token this origin's GET of
// /control.json gave (src/cli/monitor/local-control.ts): another site's page can neither read the
// token nor send the JSON body a control needs.
import { $, option } from '../ui/dom.js';
import { dateTime, t } from '../i18n/locale.js';

/** The lengths offered, as `for` takes them, with Intl's unit to name each in the page's language. */
const LENGTHS: readonly [string, number, 'minute' | 'hour' | 'day'][] = [
  ['30m', 30, 'minute'],
  ['1h', 1, 'hour'],
  ['2h', 2, 'hour'],
  ['6h', 6, 'hour'],
  ['1d', 1, 'day'],
];

/** What /control.json and each control answer. */
interface PauseState {
  paused: boolean;
  paused_until: string | null;
  csrf?: string;
  error?: string;
}

function showState(state: PauseState): void {
  $('#pause-state').textContent = state.paused && state.paused_until !== null ? t('monitor.pause-paused', { when: dateTime(Date.parse(state.paused_until), { dateStyle: 'medium', timeStyle: 'short' }) }) : t('monitor.pause-running');
  $<HTMLButtonElement>('#resume-button').disabled = !state.paused;
}

function showRefusal(reason: string): void {
  const error = $('#pause-error');
  error.textContent = t('monitor.pause-refused', { reason });
  error.hidden = false;
}

/** A control's POST with the page's CSRF token; its answer shown. */
async function post(path: string, csrf: string, body: Record<string, string>): Promise<void> {
  $('#pause-error').hidden = true;
  try {
    const res = await fetch(path, { method: 'POST', cache: 'no-store', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf }, body: JSON.stringify(body) });
    const state = (await res.json()) as PauseState;
    if (!res.ok) showRefusal(state.error ?? t('monitor.answered', { status: String(res.status) }));
    else showState(state);
  } catch (err) {
    showRefusal(err instanceof Error ? err.message : String(err));
  }
}

/** Reads the pause and the CSRF token, and wires the control; a monitor that cannot say hides it. */
export async function setUpPauseControl(): Promise<void> {
  const lengths = $<HTMLSelectElement>('#pause-for');
  lengths.replaceChildren(...LENGTHS.map(([value, count, unit]) => option(value, new Intl.NumberFormat(document.documentElement.lang, { style: 'unit', unit, unitDisplay: 'long' }).format(count))));
  try {
    const res = await fetch('/control.json', { cache: 'no-store' });
    if (!res.ok) throw new Error(t('monitor.answered', { status: String(res.status) }));
    const state = (await res.json()) as PauseState;
    const csrf = state.csrf ?? '';
    showState(state);
    $('#pause-button').addEventListener('click', () => void post('/control/pause', csrf, { for: lengths.value }));
    $('#resume-button').addEventListener('click', () => void post('/control/resume', csrf, {}));
    $('#pause-section').hidden = false;
  } catch (err) {
    showRefusal(err instanceof Error ? err.message : String(err));
  }
}
