import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { notsentLowatWarning, readNotsentLowat, SUGGESTED_NOTSENT_LOWAT } from './notsent-lowat.js';

describe('net.ipv4.tcp_notsent_lowat at start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-lowat-'));
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads the setting from its file, and nothing where there is none', () => {
    const file = join(dir, 'tcp_notsent_lowat');
    writeFileSync(file, '16384\n');
    expect(readNotsentLowat(file)).toBe(16_384);
    expect(readNotsentLowat(join(dir, 'absent'))).toBeUndefined();
  });

  it('warns when it is unlimited (Linux\'s default), naming the sysctl and a value to set; not when it is set or unknown', () => {
    const warning = notsentLowatWarning(4_294_967_295);
    expect(warning).toContain('net.ipv4.tcp_notsent_lowat is unlimited');
    expect(warning).toContain(`sysctl -w net.ipv4.tcp_notsent_lowat=${String(SUGGESTED_NOTSENT_LOWAT)}`);
    expect(notsentLowatWarning(16_384)).toBeUndefined();
    expect(notsentLowatWarning(undefined)).toBeUndefined();
  });
});
