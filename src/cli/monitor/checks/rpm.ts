// The rpm check: `netdiag rpm --json`, its figures the JSON's top level as the command prints it
// (docs/command-line.md, "netdiag rpm").
import { numberFigure, type CheckKind } from './check-kind.js';

export const rpmCheck: CheckKind<Record<string, never>> = {
  keys: [],
  settings: () => ({}),
  args: (_, server) => ['rpm', '--json', '--url', server],
  figures: [numberFigure('rpm', 'round trips a minute'), numberFigure('rpm_p90', 'round trips a minute')],
  figuresOf: (json) => ({ ...json }),
};
