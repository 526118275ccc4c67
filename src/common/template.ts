// src/common/: rules the clients (the page, the command line's client code) share with the server;
// besides the contract's generated types, the one part of src/ a client may import; it imports nothing else.
// Messages with named placeholders, `{name}`, for the words the page shows in several languages
// and the command line in English (src/common/families.ts, web/i18n/). A placeholder takes its value
// already formatted for the language (a number through Intl by the caller), so a message never
// formats a number itself; a message catalogue is checked for the same placeholders in every
// language (test/page/catalogues.test.ts).

export type Params = Readonly<Record<string, string>>;

const PLACEHOLDER = /\{([a-z][a-zA-Z0-9]*)\}/g;

/**
 * The message with each `{name}` replaced by its value. A placeholder without a value is left as
 * written, so a fault shows on the page as `{name}` rather than as a silent gap.
 */
export function fill(template: string, params: Params = {}): string {
  return template.replace(PLACEHOLDER, (whole, name: string) => params[name] ?? whole);
}

/** The names of a message's placeholders, sorted, each once. */
export function placeholders(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((m) => m[1] ?? ''))].sort();
}
