// `--server auto|NAME|URL` (docs/command-line.md, "Choosing the server"): which deployment a
// command measures against, resolved before it runs. `auto` is the nearest of the --url
// deployment's list by the shared rule (src/common/servers.ts), NAME one of that list, URL any
// deployment. A name the list does not hold is bad usage, refused before anything is measured.
import { nearest, SERVER_NAME, type ListedServer } from '../../common/servers.js';
import { FAMILY_NAME, type Family } from '../../common/families.js';
import { ApiFailure, type Client } from '../api/client.js';
import { listedServers } from './server-list.js';
import { timeServers, type Connecting } from './round-trips.js';

/** The server a command runs against, and how it was chosen. */
export interface ChosenServer {
  /** Its base URL (an origin for a listed one). */
  url: string;
  /** Its name in the list; null for a URL given as it is, or the --url deployment itself. */
  name: string | null;
  /** How: the nearest of the list, a name of it, a URL given, or the --url deployment when the list is empty. */
  how: 'auto' | 'name' | 'url' | 'unlisted';
  /** The round trip that chose it (auto), ms; null otherwise. */
  roundTripMs: number | null;
}

/** `--server`'s value in words that say what was wrong: bad usage (exit 2). */
export class ServerChoiceError extends Error {}

/** What `--server` takes: `auto`, a URL (it has a scheme), or a name. */
type Choice = { kind: 'auto' } | { kind: 'url'; url: string } | { kind: 'name'; name: string };

/** `--server`'s text read, or a ServerChoiceError saying what it is not. */
function parseServerChoice(text: string): Choice {
  if (text === 'auto') return { kind: 'auto' };
  if (text.includes('://')) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new ServerChoiceError(`"${text}" is not a URL; give auto, a server's name or a URL like https://netdiag.example.net`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ServerChoiceError(`"${text}": only http: and https: URLs are served`);
    if (url.search !== '' || url.hash !== '') throw new ServerChoiceError(`"${text}": give the deployment's base URL, without a query or fragment`);
    return { kind: 'url', url: url.href.replace(/\/+$/, '') };
  }
  if (!SERVER_NAME.test(text)) throw new ServerChoiceError(`"${text}" is not auto, a server's name (lower-case letters, digits, hyphens) or an http(s) URL`);
  return { kind: 'name', name: text };
}

const quoted = (servers: readonly ListedServer[]) => servers.map((s) => `"${s.name}"`).join(', ');

/** The families a listed server lacks of those a command measures over. */
const missing = (server: ListedServer, families: readonly Family[]): Family[] => families.filter((f) => !server.families.includes(f));

const familiesText = (families: readonly Family[]) => families.map((f) => FAMILY_NAME[f]).join(' and ');

/**
 * Resolves `--server` against the list of the deployment `client` asks; the round trips connect as
 * `connecting` says (the command's own --source and family). `families`: those the command
 * measures over (`-4`, `-6`, `--both`): a named server the list says lacks one is refused, and
 * auto chooses among those that serve them all. An unknown name is a ServerChoiceError naming the
 * known ones; none of the list answering is an ApiFailure (exit 1).
 */
export async function resolveServer(text: string, client: Client, connecting: Connecting = {}, families: readonly Family[] = []): Promise<ChosenServer> {
  const choice = parseServerChoice(text);
  if (choice.kind === 'url') return { url: choice.url, name: null, how: 'url', roundTripMs: null };
  const servers = await listedServers(client);
  if (choice.kind === 'name') {
    const named = servers.find((s) => s.name === choice.name);
    if (named === undefined) {
      const known = servers.length === 0 ? `${client.base} lists no servers` : `${client.base} lists ${quoted(servers)}`;
      throw new ServerChoiceError(`unknown server "${choice.name}": ${known}`);
    }
    const lacks = missing(named, families);
    if (lacks.length > 0) throw new ServerChoiceError(`server "${named.name}" serves ${familiesText(named.families)} only (its entry in ${client.base}'s list), not ${familiesText(lacks)}`);
    return { url: named.url, name: named.name, how: 'name', roundTripMs: null };
  }
  if (servers.length === 0) return { url: client.base, name: null, how: 'unlisted', roundTripMs: null };
  const serving = servers.filter((s) => missing(s, families).length === 0);
  if (serving.length === 0) throw new ServerChoiceError(`none of the servers ${client.base} lists serves ${familiesText(families)} (${servers.map((s) => `${s.name}: ${familiesText(s.families)}`).join('; ')})`);
  const timed = await timeServers(serving, connecting);
  const best = nearest(timed);
  if (best === undefined || best.medianMs === null) {
    const why = timed.map((t) => `${t.server.name}: ${t.error ?? 'no answer'}`).join('; ');
    throw new ApiFailure(`none of the servers ${client.base} lists answered its round trips (${why})`);
  }
  return { url: best.server.url, name: best.server.name, how: 'auto', roundTripMs: best.medianMs };
}

/** The line said on standard error about a choice, or undefined when nothing was chosen for the user. */
export function choiceLine(chosen: ChosenServer): string | undefined {
  if (chosen.how === 'auto') return `the nearest server: ${chosen.name ?? ''} (${chosen.url}, ${(chosen.roundTripMs ?? 0).toFixed(1)} ms round trip)`;
  if (chosen.how === 'unlisted') return `${chosen.url} lists no servers: measuring against it`;
  return undefined;
}
