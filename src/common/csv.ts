// src/common/: rules the clients (the page, the command line's client code) share with the server;
// besides the contract's generated types, the one part of src/ a client may import; it imports nothing else.
// CSV as the page's exports and `netdiag monitor history --csv` write it: RFC 4180 §2 fields (one
// that holds a comma, a quote or a line break is quoted, its quotes doubled), and no formula. A
// spreadsheet reads a text cell that starts with =, +, -, @, a tab or a carriage return as a
// formula (OWASP, "CSV Injection"), and a server's problem text or DNS answer can start so:
// such a cell gets a leading apostrophe, which spreadsheets show as text. Numbers stay numbers.

/** Characters that make a spreadsheet read a cell as a formula. */
const FORMULA_START = /^[=+\-@\t\r]/;

/** One cell: null empty, a number as it is, text quoted where RFC 4180 needs it and never a formula. */
export function csvCell(value: string | number | null): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Rows of cells as CSV text, a line each, ending with a line break. */
export const csvRows = (rows: readonly (readonly (string | number | null)[])[]): string => `${rows.map((r) => r.map(csvCell).join(',')).join('\n')}\n`;
