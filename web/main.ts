// The page's script: the caller's connection, a DNS lookup, regional latency and the speed test,
// all through this server's own API (same origin), but for the family check's origins and the
// speed test against a server the operator lists (src/common/servers.ts), which the page's policy names. Each
// section is its own module, with its state kept by its set-up (no state shared between modules);
// this file only starts them, in the reader's language, and hands each what another gives.
import type { Schemas } from '../src/generated/openapi-types.js';
import { showConnection } from './connection/connection.js';
import { setUpDns } from './dns/dns.js';
import { showFamilies } from './connection/dual-stack.js';
import { showRegions } from './latency/regions.js';
import { keepResult, keepWatch, setUpHistory } from './results/history-view.js';
import { setUpShare } from './results/share.js';
import { runSpeedTest } from './speedtest/speedtest.js';
import { setUpServers } from './speedtest/server-choice.js';
import { showShared } from './results/shared-view.js';
import { setUpWatch } from './latency/watch.js';
import { $, api } from './ui/dom.js';
import { t } from './i18n/locale.js';
import { setUpLanguage } from './i18n/page-text.js';
import { clientInstallCommand } from './speedtest/result-text.js';
import { RESOURCE_TIMING_ROOM } from './speedtest/fetch-transport.js';

/** The credits the server's geo data asks for (its licence), as the server gives them. */
function showCredits(): void {
  const credits = document.documentElement.dataset.credits;
  if (credits === undefined || credits === '') return;
  const element = $('#credits');
  element.textContent = t('page.credits', { credits: credits.split('\n').join(t('page.credits-separator')) });
  element.hidden = false;
}

/**
 * The one command that installs the command-line client from this server, when it serves one;
 * over plain HTTP (not a secure context) why it is not offered instead (speedtest/result-text.ts clientInstallCommand).
 */
function showClientInstall(): void {
  const clientPackage = document.documentElement.dataset.clientPackage;
  if (clientPackage === undefined) return;
  const command = clientInstallCommand(location.origin, clientPackage, window.isSecureContext);
  if (command === undefined) {
    const why = $('#client-install-refused');
    why.textContent = t('page.client-https-only');
    why.hidden = false;
    return;
  }
  $('#client-install code').textContent = command;
  $('#client-install').hidden = false;
}

document.addEventListener('DOMContentLoaded', () => {
  // The reader's language first (its catalogue fetched when it is not English): every section
  // writes its words in it (web/i18n/).
  void setUpLanguage().then(startSections);
});

function startSections(): void {
  // Room for every Resource Timing entry of a test, which the round trips are read from; the
  // browser's default of 250 is less than one test's requests (W3C Resource Timing,
  // setResourceTimingBufferSize).
  performance.setResourceTimingBufferSize(RESOURCE_TIMING_ROOM);
  showCredits();
  showClientInstall();
  showShared();
  setUpHistory();
  setUpDns();
  void showConnection().then(showFamilies);
  void runSpeedTest({ share: setUpShare(), keep: keepResult }, setUpServers());
  // One request for the regions, for the regional section and the watch alike; the regional
  // section's probe answers tell the watch this server's probe limit.
  void api<Schemas['RegionsResponse']['data']>('/v1/latency/regions').then((res) => {
    const watch = setUpWatch(res.ok ? res.data.regions.filter((r) => r.available) : [], keepWatch);
    return showRegions(res, (limit) => {
      watch.noteProbeLimit(limit);
    });
  });
}
