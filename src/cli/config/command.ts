// `netdiag config`: the deployment's speed-test configuration, said as what measures it and each mode's steps.
import type { Schemas } from '../../generated/openapi-types.js';
import type { Client } from '../api/client.js';
import { print, printJson, table, type Output } from '../terminal/output.js';
import { terminalText } from '../terminal/terminal-text.js';

/** The speed-test library's name as the API contract's configuration carries it (its `engine` is a constant there). */
const CONTRACT_ENGINE = '@provider/speedtest';

/** `netdiag config`: the speed test's plans (/v1/speed-test/configuration), each mode's steps as a table. */
export async function configCommand(client: Client, out: Output): Promise<void> {
  const d = await client.get<Schemas['SpeedTestConfiguration']>('/v1/speed-test/configuration');
  if (out.json) {
    printJson(d);
    return;
  }
  // The contract's engine name is a constant that names no program: a reader is told
  // what measures instead. A server that is not netdiag may send any name, shown as it is.
  const named: string = d.engine;
  print(named === CONTRACT_ENGINE ? "The speed test's plans: netdiag's page runs them with Cloudflare's speed-test engine, `netdiag speedtest` with its own client." : terminalText(`engine ${named}`));
  for (const mode of d.modes) {
    print(`\n${terminalText(`${mode.id}: ${mode.description}`)}`);
    print(
      table(out, [
        ['STEP', 'TYPE', 'COUNT', 'BYTES'],
        ...mode.measurements.map((m, i) => [String(i + 1), m.type, String(m.packet_count ?? m.request_count ?? ''), m.bytes_per_request === undefined ? '' : String(m.bytes_per_request)]),
      ]),
    );
  }
}
