#!/usr/bin/env node
// The `netdiag` command of the netdiag-client package (scripts/pack-client.mjs bundles this file
// into one with its packages): the client commands of program/program.ts alone, with none of the
// servers' modules, packages or geo data. Exit status as the full command's (docs/command-line.md).
import type { Command } from 'commander';
import { addClientCommands, rootCommand, runProgram } from './program/program.js';

await runProgram(() => {
  const root = rootCommand('Privacy-first network information and diagnostics: a client for any netdiag deployment.');
  addClientCommands(root);
  // The documentation names `netdiag serve` and `netdiag probe`; asked for here, they say where
  // the servers are instead of commander's bare "unknown command". Hidden from the help, and bad
  // usage (exit 2) whatever follows them, --help included (`netdiag help serve` shows the description).
  for (const name of ['serve', 'probe']) {
    root
      .command(name, { hidden: true })
      .description('not in netdiag-client: the servers are in the netdiag package')
      .helpOption(false)
      .allowUnknownOption()
      .allowExcessArguments()
      .action((_options: unknown, command: Command) => {
        command.error(`error: netdiag ${name} is not in netdiag-client, which has the client commands only; the servers are in the netdiag package`, { exitCode: 2 });
      });
  }
  return root;
});
