// goresponsiveness's probe logs (`-logger-filename`): one CSV per probe kind, a row per probe of
// the rounds whose both probes answered while responsiveness was measured. Columns: the probe's
// start, its round trips (3 for a foreign probe: TCP, TLS, HTTP; 1 for a self probe), its whole
// duration in seconds, the connection's RTT and window (0 without -extended-stats), the kind
// (Foreign, SelfDown, SelfUp) and a congestion control name.
import { readFileSync } from 'node:fs';
import { median } from './lib.mjs';

/** goresponsiveness's default statistic (-rpm.tmp 5, utilities.TrimBy): the mean of the fastest 5%. */
const fastestFivePercentMean = (xs) => {
  const kept = [...xs].sort((a, b) => a - b).slice(0, Math.floor(xs.length * 0.05));
  return kept.length === 0 ? undefined : kept.reduce((a, b) => a + b, 0) / kept.length;
};

/**
 * Each kind's probes from the logs in `files`: counts, trimmed means and medians in ms (a foreign
 * probe's whole time, from its connection's start to its body's end), and the RPM over all of
 * them two ways: by `rules` (src/common/responsiveness/rpm.ts, what `netdiag rpm` computes) and by
 * goresponsiveness's default statistic, the fastest 5% (foreign probes in thirds, as it counts them).
 */
export function goresponsivenessProbes(files, rules) {
  const kinds = { Foreign: [], SelfDown: [], SelfUp: [] };
  for (const file of files) {
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const fields = line.split(',').map((f) => f.trim());
      const kind = fields[5];
      const seconds = Number(fields[2]);
      if (kind in kinds && Number.isFinite(seconds)) kinds[kind].push(seconds * 1000);
    }
  }
  const self = [...kinds.SelfDown, ...kinds.SelfUp];
  const orUndefined = (xs, f) => (xs.length === 0 ? undefined : f(xs));
  const fastestForeign = fastestFivePercentMean(kinds.Foreign.map((v) => v / 3));
  const fastestSelf = fastestFivePercentMean(self);
  return {
    foreign_ms: rules.trimmedMean(kinds.Foreign),
    self_down_ms: rules.trimmedMean(kinds.SelfDown),
    self_up_ms: rules.trimmedMean(kinds.SelfUp),
    medians: { foreign: orUndefined(kinds.Foreign, median), self_down: orUndefined(kinds.SelfDown, median), self_up: orUndefined(kinds.SelfUp, median) },
    counts: { foreign: kinds.Foreign.length, self_down: kinds.SelfDown.length, self_up: kinds.SelfUp.length },
    rpm_all_probes: rules.responsiveness({ ...rules.noProbes(), foreign: kinds.Foreign, self }),
    rpm_fastest_5_percent: fastestForeign === undefined || fastestSelf === undefined ? undefined : 60_000 / ((fastestForeign + fastestSelf) / 2),
  };
}
