// The shared configuration parsers and the table reader, called directly: pure, so each case is
// a value in and a meaning (or the exact refusal) out.
import { describe, expect, it } from 'vitest';
import { MAKE_A_KEY, collectorUrl, either, logLevel, onOff, probeUrl, publicUrl, regionPairs, secretKey, url, wholeNumber } from './parsers.js';
import { ConfigError, readTable, variable, type Parser } from './table.js';
import { SHARED } from './vars.js';

/** The message a parser refuses `text` with, or 'accepted'. */
function refusal(parse: Parser<unknown>, text: string): string {
  try {
    parse(text);
    return 'accepted';
  } catch (err) {
    return (err as Error).message;
  }
}

describe('wholeNumber', () => {
  const port = wholeNumber(0, 65535);

  it('accepts its bounds and what lies between', () => {
    expect(['0', '1', '8080', '65535', '00080'].map(port)).toEqual([0, 1, 8080, 65535, 80]);
    expect(port.bounds).toEqual({ min: 0, max: 65535 });
  });

  it.each(['-1', '65536', '+1', '1.5', '1e3', '0x10', 'eighty', '99999999999999999999', ' 1'])('refuses "%s", naming the bounds', (text) => {
    expect(refusal(port, text)).toBe(`must be a whole number from 0 to 65535, got "${text}"`);
  });

  it('is exact up to the largest bound in use (16 GiB of DNS cache)', () => {
    const bytes = SHARED.NETDIAG_DNS_CACHE_BYTES.parse;
    expect(bytes('17179869184')).toBe(16 * 1024 * 1024 * 1024);
    expect(refusal(bytes, '17179869185')).toBe('must be a whole number from 0 to 17179869184, got "17179869185"');
  });
});

describe('words', () => {
  it('on/off', () => {
    expect([onOff('on'), onOff('off')]).toEqual([true, false]);
    for (const text of ['yes', 'On', 'true', '1']) expect(refusal(onOff, text)).toBe(`must be on or off, got "${text}"`);
  });

  it('either of two', () => {
    const sockets = either('per-query', 'shared');
    expect([sockets('per-query'), sockets('shared')]).toEqual(['per-query', 'shared']);
    expect(refusal(sockets, 'pooled')).toBe('must be per-query or shared, got "pooled"');
  });

  it('log levels', () => {
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'silent']) expect(logLevel(level)).toBe(level);
    expect(refusal(logLevel, 'loud')).toBe('must be one of fatal, error, warn, info, debug, silent');
    expect(refusal(logLevel, 'INFO')).toBe('must be one of fatal, error, warn, info, debug, silent');
  });
});

describe('URLs', () => {
  it('url: a URL of one of the schemes', () => {
    expect(url('redis://127.0.0.1:6379', ['redis:', 'rediss:']).href).toBe('redis://127.0.0.1:6379');
    expect(() => url('not a url', ['https:'])).toThrow('"not a url" is not a URL');
    expect(() => url('http://a.example', ['redis:', 'rediss:'])).toThrow('"http://a.example" must use redis: or rediss:');
  });

  it('NETDIAG_PUBLIC_URL: http(s), no query or fragment, the trailing slash dropped', () => {
    expect(publicUrl('https://api.example.net/')).toBe('https://api.example.net');
    expect(publicUrl('https://api.example.net/base//')).toBe('https://api.example.net/base');
    expect(refusal(publicUrl, 'ftp://api.example.net')).toBe('"ftp://api.example.net" must use http: or https:');
    expect(refusal(publicUrl, 'https://api.example.net/?x=1')).toBe('must not have a query or fragment');
    expect(refusal(publicUrl, 'https://api.example.net/#top')).toBe('must not have a query or fragment');
  });

  it('a collector: credentials become HTTP Basic (RFC 7617, UTF-8) and leave the URL', () => {
    expect(collectorUrl('https://collector.example/ingest?x=1')).toEqual({ url: 'https://collector.example/ingest?x=1', authorization: undefined });
    expect(collectorUrl('https://us%C3%A9r:p%3Ass@collector.example/ingest')).toEqual({
      url: 'https://collector.example/ingest',
      authorization: `Basic ${Buffer.from('usér:p:ss', 'utf8').toString('base64')}`,
    });
    expect(collectorUrl('http://:only-password@collector.example/')).toEqual({ url: 'http://collector.example/', authorization: `Basic ${btoa(':only-password')}` });
    expect(() => collectorUrl('https://us%3Aer:pw@collector.example/')).toThrow('the user name in the URL must not contain ":"');
    expect(() => collectorUrl('https://%zz:pw@collector.example/')).toThrow('the credentials in the URL are not valid percent-encoding');
  });

  it("a probe's URL: http(s), no credentials, query or fragment; a path prefix kept", () => {
    expect(probeUrl('weur', 'http://10.0.2.7:8081/base')).toBe('http://10.0.2.7:8081/base');
    expect(() => probeUrl('weur', 'ftp://127.0.0.1')).toThrow('"ftp://127.0.0.1" must use http: or https:');
    expect(() => probeUrl('weur', 'http://user:secret@a.example')).toThrow('the URL for "weur" must not carry credentials');
    expect(() => probeUrl('weur', 'http://a.example/#x')).toThrow('the URL for "weur" must not have a query or fragment');
  });
});

describe('secretKey', () => {
  it('at least 32 characters, saying how to make one', () => {
    expect(secretKey('k'.repeat(32))).toBe('k'.repeat(32));
    expect(refusal(secretKey, 'k'.repeat(31))).toBe(`must be at least 32 characters of secret, got 31: ${MAKE_A_KEY}`);
  });
});

describe('regionPairs', () => {
  // The regions are the caller's: the parser knows none of its own.
  const isRegion = (name: string): name is 'north' | 'south' => name === 'north' || name === 'south';
  const pairs = regionPairs(isRegion, 'region=url', (region, text) => `${region}:${text}`);

  it('reads comma-separated pairs, trimmed, each region once', () => {
    expect([...pairs('north=a, south=b=c')]).toEqual([
      ['north', 'north:a'],
      ['south', 'south:b=c'],
    ]);
  });

  it.each([
    ['north', '"north" is not region=url'],
    ['north=a,', '"" is not region=url'],
    ['weur=a', 'unknown region "weur"'],
    ['north=a,north=b', 'region "north" is given twice'],
  ])('refuses %s', (text, message) => {
    expect(refusal(pairs, text)).toBe(message);
  });
});

describe('readTable', () => {
  const TABLE = {
    A_NUMBER: variable({ about: 'a number', parse: wholeNumber(1, 9), default: 5 }),
    A_SWITCH: variable({ about: 'a switch', parse: onOff, default: false }),
    A_SECRET: variable<string | undefined>({ about: 'a secret', parse: secretKey, default: undefined, required: 'is required here' }),
  };
  const key = 'k'.repeat(32);

  it('gives each variable its value, its default when unset, empty or blank, and trims', () => {
    expect(readTable(TABLE, { A_SECRET: key })).toEqual({ A_NUMBER: 5, A_SWITCH: false, A_SECRET: key });
    expect(readTable(TABLE, { A_NUMBER: '', A_SWITCH: '  ', A_SECRET: key })).toEqual({ A_NUMBER: 5, A_SWITCH: false, A_SECRET: key });
    expect(readTable(TABLE, { A_NUMBER: ' 7 ', A_SWITCH: 'on', A_SECRET: ` ${key}\n` })).toEqual({ A_NUMBER: 7, A_SWITCH: true, A_SECRET: key });
  });

  it('names the variable a parser refused, the first in the table\'s order', () => {
    const refused = (() => {
      try {
        readTable(TABLE, { A_NUMBER: '10', A_SWITCH: 'yes', A_SECRET: key });
      } catch (err) {
        return err;
      }
    })();
    expect(refused).toBeInstanceOf(ConfigError);
    expect(refused).toMatchObject({ variable: 'A_NUMBER', message: 'must be a whole number from 1 to 9, got "10"' });
  });

  it('refuses a required variable left unset with its own message', () => {
    expect(() => readTable(TABLE, { A_SECRET: ' ' })).toThrow(expect.objectContaining({ variable: 'A_SECRET', message: 'is required here' }));
  });

});
