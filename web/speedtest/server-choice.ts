// The server choice beside Start: the operator's list (GET /v1/servers on this origin; docs/api.md),
// "Nearest" first and chosen by default, then each listed server by name and location. The nearest
// is found by the rule the command line's `--server auto` uses (src/common/servers.ts): each server
// timed in parallel, its round trips one after another, the lowest median wins. A deployment with
// no list (or one older than the list, answering 404) shows no choice: the page measures itself.
import { isIpv6LiteralOrigin } from '../../src/common/origin.js';
import { byRoundTrip, NEAREST_ROUND_TRIPS, NEAREST_TIMEOUT_MS, nearest, roundTripMedian, type ListedServer, type TimedServer } from '../../src/common/servers.js';
import { $, api, option } from '../ui/dom.js';
import { isolatedName, listed, t, tParts, type Part } from '../i18n/locale.js';
import { formatMs } from './result-text.js';
import { FetchLoadTransport } from './fetch-transport.js';

/** What a test is measured against: an origin, and the listed server it is when it is one. */
export interface Target {
  base: string;
  server: ListedServer | undefined;
}

/** The server the form asks for, found (the nearest timed) when Start is pressed. */
export interface ServerChoice {
  target(): Promise<Target>;
  /** Hides the choice and its lines while a family is chosen (web/speedtest/family-choice.ts), and shows them again. */
  hold(held: boolean): void;
}

/**
 * This page's own origin, measured when the deployment lists no server or none answers: the one
 * origin its policy always allows ('self'). No server name: a result measured against the
 * deployment that shows it names none (src/common/speedtest/share.ts).
 */
const OWN: Target = { base: location.origin, server: undefined };

/**
 * A server the page can ask: any but one named by an IPv6 literal, which the page's policy cannot
 * name (src/common/origin.ts), unless it is the page's own origin, which the policy allows as 'self'.
 */
const askable = (server: ListedServer): boolean => !isIpv6LiteralOrigin(server.url) || server.url === location.origin;

/**
 * One server's round trips, one after another on the page's transport (Resource Timing, the
 * server's own time taken out), within NEAREST_TIMEOUT_MS; null when it did not answer them all.
 */
async function timed(server: ListedServer): Promise<TimedServer> {
  const transport = new FetchLoadTransport(server.url);
  const signal = AbortSignal.timeout(NEAREST_TIMEOUT_MS);
  const trips: number[] = [];
  try {
    for (let n = 0; n < NEAREST_ROUND_TRIPS; n++) trips.push((await transport.roundTrip('idle', n, signal)).ms);
    return { server, medianMs: roundTripMedian(trips) };
  } catch {
    return { server, medianMs: null };
  }
}

/** Every server timed at once. */
const timeAll = (servers: readonly ListedServer[]): Promise<TimedServer[]> => Promise.all(servers.map(timed));

/** A server as the page names it: its name and where it is. */
export const serverLabel = (server: ListedServer): string => t('speed.server-option', { name: server.name, location: server.location });

/** A server as the line under the form names it: its name and where it is, each a unit of its own. */
const serverParts = (server: ListedServer): Part[] => tParts('speed.server-option', { name: [isolatedName(server.name)], location: [isolatedName(server.location)] });

/** What "Nearest" found: the server with the lowest round trip, or this page's own origin when none answered. */
function nearestTarget(all: readonly TimedServer[]): Target {
  const found = nearest(all);
  return found === undefined || found.medianMs === null ? OWN : { base: found.server.url, server: found.server };
}

/** The line under the form: which server "Nearest" found, with its round trip, and each the page timed, by round trip, in its title. */
function sayNearest(all: readonly TimedServer[]): void {
  const note = $('#speed-server-note');
  const found = nearest(all);
  note.title = byRoundTrip(all)
    .map((s) => `${s.server.name}: ${s.medianMs === null ? t('speed.server-unreachable') : formatMs(s.medianMs)}`)
    .join('\n');
  note.hidden = false;
  if (found === undefined || found.medianMs === null) {
    note.textContent = t('speed.nearest-none');
    delete note.dataset.server;
    delete note.dataset.ms;
    return;
  }
  note.replaceChildren(...tParts('speed.nearest-found', { server: serverParts(found.server), time: formatMs(found.medianMs) }));
  note.dataset.server = found.server.name;
  note.dataset.ms = String(found.medianMs);
}

/** The listed servers the page cannot ask, each named with why. */
function saySkipped(skipped: readonly ListedServer[]): void {
  const line = $('#speed-server-skipped');
  line.hidden = skipped.length === 0;
  line.textContent = skipped.length === 0 ? '' : t('speed.server-skipped', { servers: listed(skipped.map((s) => `${s.name} (${s.url})`)) });
}

/** The list from this origin: empty when the deployment has none or predates it (404), or cannot say. */
async function listedServers(): Promise<ListedServer[]> {
  const res = await api<{ servers: ListedServer[] }>('/v1/servers');
  return res.ok ? res.data.servers : [];
}

/** Fills the choice from the list (or hides it), and times the servers once for "Nearest" to show what it would pick. */
export async function setUpServers(): Promise<ServerChoice> {
  const all = await listedServers();
  const servers = all.filter(askable);
  saySkipped(all.filter((s) => !askable(s)));
  if (servers.length === 0) return { target: () => Promise.resolve(OWN), hold: () => undefined };
  const select = $<HTMLSelectElement>('#speed-server');
  select.replaceChildren(option('', t('speed.server-nearest')), ...servers.map((s) => option(s.name, serverLabel(s))));
  $('#speed-server-pair').hidden = false;
  const note = $('#speed-server-note');
  let timing: Promise<Target> | undefined;
  /** The nearest, timed now; a second ask while one is under way shares it. */
  const findNearest = (): Promise<Target> => {
    note.textContent = t('speed.nearest-finding');
    note.title = '';
    delete note.dataset.server;
    delete note.dataset.ms;
    note.hidden = false;
    if (timing !== undefined) return timing;
    timing = timeAll(servers).then((all) => {
      // The timing takes up to NEAREST_TIMEOUT_MS: a server picked by name meanwhile keeps its own line.
      if (select.value === '') sayNearest(all);
      return nearestTarget(all);
    });
    void timing.finally(() => {
      timing = undefined;
    });
    return timing;
  };
  const sayChosen = () => {
    const server = servers.find((s) => s.name === select.value);
    if (server === undefined) return;
    note.replaceChildren(...tParts('speed.server-chosen', { server: serverParts(server) }));
    note.title = '';
    note.dataset.server = server.name;
    delete note.dataset.ms;
  };
  select.addEventListener('change', () => {
    if (select.value === '') void findNearest();
    else sayChosen();
  });
  void findNearest();
  return {
    // "Nearest" is timed again as a test starts: the line it shows is then the one the test ran against.
    target: () => {
      const server = servers.find((s) => s.name === select.value);
      return server === undefined ? findNearest() : Promise.resolve({ base: server.url, server });
    },
    hold: (held) => {
      $('#speed-server-pair').hidden = held;
      note.hidden = held;
    },
  };
}
