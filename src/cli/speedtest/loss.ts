// The speed test's packet-loss step from the command line: credentials for the deployment's TURN
// server from the API, then the loss measured through it (turn/relay-loss.ts). When it cannot be
// measured, the reason is the result: "not measured" is never reported as 0%.
import { ApiFailure, type Client } from '../api/client.js';
import type { Schemas } from '../../generated/openapi-types.js';
import { LossNotMeasured, lossUntrustedHere, measureLoss, type LossPlan, type LossResult } from './turn/relay-loss.js';

/**
 * Measured, or not and why. `untrusted`: it ran, but what it counted includes datagrams this
 * computer itself failed to send or dropped, so no figure is given as the network's.
 */
export type PacketLoss = ({ measured: true } & LossResult) | { measured: false; reason: string; untrusted?: true };

/** Through the deployment's TURN server, its socket bound as the client's connections are (`--source`, `-4` / `-6`). */
export async function packetLoss(client: Client, plan?: LossPlan): Promise<PacketLoss> {
  let credentials: Schemas['TurnCredentials'];
  try {
    credentials = await client.get<Schemas['TurnCredentials']>('/v1/speed-test/turn-credentials');
  } catch (err) {
    if (!(err instanceof ApiFailure)) throw err;
    if (err.status === 404) return { measured: false, reason: 'this deployment has no TURN server to measure it through' };
    return { measured: false, reason: `no TURN credentials: ${err.message}` };
  }
  try {
    const result = await measureLoss(credentials, plan, client.binding);
    const untrusted = lossUntrustedHere(result);
    return untrusted === undefined ? { measured: true, ...result } : { measured: false, reason: untrusted, untrusted: true };
  } catch (err) {
    if (err instanceof LossNotMeasured) return { measured: false, reason: err.message };
    throw err;
  }
}
