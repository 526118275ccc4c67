// After a test: Share (a link to this page whose fragment carries the result, copied, and the
// contract's speed_test_shared event) and Export (the figures and every point, as CSV or JSON).
// The result lives in the page until the next test or the tab closes; nothing is stored anywhere.
import type { Schemas } from '../../src/generated/openapi-types.js';
import { shareLink } from '../../src/common/speedtest/share.js';
import { $, text } from '../ui/dom.js';
import { t } from '../i18n/locale.js';
import { sendEvent } from '../events/events.js';
import { download, fileName, testCsv, testJson, type TestExport } from './export.js';

/** A finished test, with what its share event needs. */
export interface FinishedTest extends TestExport {
  eventId: string;
  config: Schemas['SpeedTestConfiguration'];
}

/** What a finished test offers: Share and Export; `offer` with none withdraws them (a new test). */
export interface ShareOffer {
  offer(record: FinishedTest | undefined): void;
}

/** Wires Share and Export once, for the test on offer (held here, not in a module variable). */
export function setUpShare(): ShareOffer {
  let current: FinishedTest | undefined;
  $('#speed-share').addEventListener('click', () => {
    if (current === undefined) return;
    const withAddress = $<HTMLInputElement>('#speed-share-address').checked;
    const address = $('#address').textContent.trim();
    const link = shareLink(`${location.origin}/`, { ...current.shared, ...(withAddress && address !== '' ? { address } : {}) });
    // Labelled, with what became of the copy beside it: the test's own status ("Done.") stays.
    $<HTMLOutputElement>('#speed-share-link').value = link;
    $('#speed-share-box').hidden = false;
    const said = (message: string) => {
      text('#speed-share-said', message);
    };
    // navigator.clipboard is [SecureContext] in the Clipboard API, so absent on plain HTTP off
    // localhost, whatever the DOM types say: the link is then shown to copy by hand, saying why.
    const clipboard = navigator.clipboard as Clipboard | undefined;
    if (clipboard === undefined) said(t('speed.copy-plain-http'));
    else {
      said('');
      clipboard.writeText(link).then(
        () => {
          said(t('speed.copied'));
        },
        () => {
          said(t('speed.copy-refused'));
        },
      );
    }
    sendEvent(current.config, 'speed_test_shared', current.eventId, { mode: current.shared.mode });
  });
  $('#speed-export-csv').addEventListener('click', () => {
    if (current !== undefined) download(fileName('speedtest', current.shared.at, 'csv'), 'text/csv', testCsv(current));
  });
  $('#speed-export-json').addEventListener('click', () => {
    if (current !== undefined) download(fileName('speedtest', current.shared.at, 'json'), 'application/json', testJson(current));
  });
  return {
    offer: (record) => {
      current = record;
      $('#speed-after').hidden = record === undefined;
      if (record === undefined) $('#speed-share-box').hidden = true;
    },
  };
}
