#!/usr/bin/env node
// The `netdiag` command: the servers (serve, probe) and the client commands against any
// deployment (ip, dns, latency, speedtest, config, watch; defined in program/program.ts, which the
// client-only package's entry, client-main.ts, shares). Arguments parsed by commander; exit
// status 0 on success, 1 when the API or the network failed, 2 for bad usage, 3 when a watch
// crossed a threshold (docs/command-line.md).
import type { Command } from 'commander';
import { addClientCommands, rootCommand, runProgram } from './program/program.js';

/** The servers' configuration tables, loaded only when help is asked for (see helpTables). */
type ServerTables = Record<'serve' | 'probe', string>;

function addServerCommands(root: Command, tables?: ServerTables): void {
  // The servers take no options or arguments: their configuration is the environment, and their
  // help lists the variables each reads, from the same tables start-up reads them with.
  const servers = [
    ['serve', 'run the API (configuration from the environment: netdiag serve --help lists it)'],
    ['probe', 'run a regional latency probe (configuration from the environment: netdiag probe --help lists it)'],
  ] as const;
  for (const [name, description] of servers) {
    root
      .command(name)
      .description(description)
      .addHelpText('after', () => (tables === undefined ? '' : `\nEnvironment:\n${tables[name]}\n`))
      .action(async () => {
        // Loaded only when asked for: the client commands never pay for the servers' modules.
        const start = await import('./servers/server-process.js');
        await start[name]();
      });
  }
}

/** The configuration tables as text when help is asked for; otherwise no server module is loaded. */
async function helpTables(args: string[]): Promise<ServerTables | undefined> {
  if (!args.some((a) => a === '-h' || a === '--help' || a === 'help')) return undefined;
  const [{ SERVE_VARIABLES, PROBE_VARIABLES }, { describeTable }] = await Promise.all([import('../runtime/node/adapter/config.js'), import('../core/config/table.js')]);
  return { serve: describeTable(SERVE_VARIABLES), probe: describeTable(PROBE_VARIABLES) };
}

await runProgram(async () => {
  const root = rootCommand('Privacy-first network information and diagnostics: the API server, its regional probe, and a client for any deployment.');
  // The servers first: the help lists them before the client commands, as it always has.
  addServerCommands(root, await helpTables(process.argv.slice(2)));
  addClientCommands(root);
  return root;
});
