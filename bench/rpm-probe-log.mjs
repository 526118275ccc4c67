// goresponsiveness's probe logs (`-logger-filename`): one CSV per probe kind, a row per probe of
// the rounds whose both probes answered while responsiveness was measured. Columns: the probe's
// start, its round trips (3 for a foreign probe: TCP, TLS, HTTP; 1 for a self probe), its whole
// duration in seconds, the connection's RTT and window (0 without -extended-stats), the kind
// (Foreign, SelfDown, SelfUp) and a congestion control name.
import { readFileSync } from 'node:fs';

const median = (xs) => {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** The mean of the fastest `keep` share of `xs`. */
const keptMean = (xs, keep) => {
  const s = [...xs].sort((a, b) => a - b).slice(0, Math.floor(xs.length * keep));
  return s.length === 0 ? undefined : s.reduce((a, b) => a + b, 0) / s.length;
};

/** The draft's formula over times kept by `keep`: 60 000 over the mean of the self probes' and the foreign probes' thirds. */
const rpmOf = (foreign, self, keep) => {
  const f = keptMean(foreign.map((v) => v / 3), keep);
  const s = keptMean(self, keep);
  return f === undefined || s === undefined ? undefined : 60_000 / ((f + s) / 2);
};

/**
 * Each kind's probes from the logs in `files`: counts, trimmed means (the fastest 95%) and
 * medians in ms (a foreign probe's whole time, from its connection's start to its body's end),
 * and the RPM over all of them two ways: the draft's (the fastest 95% kept) and goresponsiveness's
 * default (-rpm.tmp 5: the fastest 5%).
 */
export function goresponsivenessProbes(files) {
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
  return {
    foreign_ms: keptMean(kinds.Foreign, 0.95),
    self_down_ms: keptMean(kinds.SelfDown, 0.95),
    self_up_ms: keptMean(kinds.SelfUp, 0.95),
    medians: { foreign: median(kinds.Foreign), self_down: median(kinds.SelfDown), self_up: median(kinds.SelfUp) },
    counts: { foreign: kinds.Foreign.length, self_down: kinds.SelfDown.length, self_up: kinds.SelfUp.length },
    rpm_all_probes: rpmOf(kinds.Foreign, self, 0.95),
    rpm_fastest_5_percent: rpmOf(kinds.Foreign, self, 0.05),
  };
}
