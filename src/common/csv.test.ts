import { describe, expect, it } from 'vitest';
import { csvCell, csvRows } from './csv.js';

describe('CSV cells', () => {
  it('quote what RFC 4180 needs quoted, doubling quotes', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell('cr\rhere')).toBe('"cr\rhere"');
    expect(csvCell(null)).toBe('');
    expect(csvCell('')).toBe('');
  });

  it('never start a formula: text led by =, +, -, @, a tab or a carriage return gets an apostrophe; numbers stay numbers', () => {
    for (const lead of ['=', '+', '-', '@', '\t', '\r']) expect(csvCell(`${lead}1+1`).replace(/^"/, '')).toMatch(/^'/);
    expect(csvCell('=HYPERLINK("https://evil.example","x")')).toBe('"\'=HYPERLINK(""https://evil.example"",""x"")"');
    expect(csvCell(-2.5)).toBe('-2.5');
    expect(csvCell('a=b')).toBe('a=b');
    expect(csvRows([['a', 1], ['=x', null]])).toBe("a,1\n'=x,\n");
  });
});
