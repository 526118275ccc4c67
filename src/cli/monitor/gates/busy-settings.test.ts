// A check's `skip_when_busy:` as the configuration file gives it: a percent or a rate taken, and
// each bad value refused at start with the file's line, the field and what is accepted.
import { afterEach, describe, expect, it } from 'vitest';
import { MonitorConfigError, parseMonitorConfig } from '../monitor-config.js';

const config = (value: string): string => `servers: [https://netdiag.example.net/]\nchecks:\n  - name: line speed\n    run: speedtest\n    every: 30m\n    skip_when_busy: ${value}\n`;
const parse = (value: string) => parseMonitorConfig(config(value), 'monitor.yaml', '/data/monitor.db').checks[0]?.skipWhenBusy;
const fault = (value: string): string => {
  try {
    parse(value);
  } catch (err) {
    if (err instanceof MonitorConfigError) return err.message;
    throw err;
  }
  throw new Error('no fault found');
};
const ACCEPTED = "a percent of the link's measured capacity (20%) or a rate (500 kbit/s, 5 Mbit/s, 1 Gbit/s)";

describe("a check's skip_when_busy", () => {
  const platform = process.platform;
  const sample = process.env.NETDIAG_MONITOR_BUSY_SAMPLE;
  afterEach(() => {
    Object.defineProperty(process, 'platform', { value: platform });
    if (sample === undefined) delete process.env.NETDIAG_MONITOR_BUSY_SAMPLE;
    else process.env.NETDIAG_MONITOR_BUSY_SAMPLE = sample;
  });

  it('takes a percent of the capacity or a rate in kbit/s, Mbit/s or Gbit/s, read for 3 s by default', () => {
    delete process.env.NETDIAG_MONITOR_BUSY_SAMPLE;
    expect(parse('20%')).toEqual({ limit: { percent: 20 }, text: '20%', sampleMs: 3000 });
    expect(parse('12.5 %')).toMatchObject({ limit: { percent: 12.5 } });
    expect(parse('500 kbit/s')).toMatchObject({ limit: { mbitPerSecond: 0.5 }, text: '500 kbit/s' });
    expect(parse('5 Mbit/s')).toMatchObject({ limit: { mbitPerSecond: 5 } });
    expect(parse('1Gbit/s')).toMatchObject({ limit: { mbitPerSecond: 1000 } });
  });

  it.each([
    ['20', `monitor.yaml:6: checks[0].skip_when_busy: 20 has no unit: write ${ACCEPTED}`],
    ['0%', 'monitor.yaml:6: checks[0].skip_when_busy: "0%" is not a percent above 0 and below 100'],
    ['100%', 'monitor.yaml:6: checks[0].skip_when_busy: "100%" is not a percent above 0 and below 100'],
    ['150%', 'monitor.yaml:6: checks[0].skip_when_busy: "150%" is not a percent above 0 and below 100'],
    ['0 Mbit/s', 'monitor.yaml:6: checks[0].skip_when_busy: "0 Mbit/s" is not a rate above 0'],
    ['-5%', `monitor.yaml:6: checks[0].skip_when_busy: "-5%" is not ${ACCEPTED}`],
    ['5 MB/s', `monitor.yaml:6: checks[0].skip_when_busy: "5 MB/s" is not ${ACCEPTED}`],
    ['busy', `monitor.yaml:6: checks[0].skip_when_busy: "busy" is not ${ACCEPTED}`],
    ['{ percent: 20 }', `monitor.yaml:6: checks[0].skip_when_busy: must be ${ACCEPTED}`],
    ['', `monitor.yaml:6: checks[0].skip_when_busy: must be ${ACCEPTED}`],
  ])('refuses %j, naming the line, the field and what is accepted', (value, message) => {
    expect(fault(value)).toBe(message);
  });

  it('refuses a sample length the suites set that is not 1s to 60s, naming the variable', () => {
    process.env.NETDIAG_MONITOR_BUSY_SAMPLE = '500ms';
    expect(fault('20%')).toBe('monitor.yaml:6: checks[0].skip_when_busy: NETDIAG_MONITOR_BUSY_SAMPLE "500ms" is not a duration of 1s to 60s');
    process.env.NETDIAG_MONITOR_BUSY_SAMPLE = '2s';
    expect(parse('20%')?.sampleMs).toBe(2000);
  });

  it('is refused at start elsewhere than Linux, whose /sys/class/net it reads', () => {
    Object.defineProperty(process, 'platform', { value: 'darwin' });
    expect(fault('20%')).toBe("monitor.yaml:6: checks[0].skip_when_busy: reads the interface counters in Linux's /sys/class/net, which this system (darwin) does not have; remove it here");
  });
});
