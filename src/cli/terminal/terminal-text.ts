// What a server sent, made safe to write to a terminal. A TXT record, a CNAME target, a problem's
// detail or an error's words are chosen by whoever runs the zone or the deployment; written raw,
// an ESC or CSI sequence (ECMA-48) erases or recolours what was printed, a CR overwrites the
// line, OSC 0 sets the window title and OSC 52 writes the clipboard. Every human-output path of
// the CLI goes through `terminalText`; `--json` goes through `terminalJson` (docs/command-line.md,
// "Text from servers").

const utf8 = new TextEncoder();

/**
 * Characters escaped: C0 controls and DEL (ECMA-48's control functions), C1 controls U+0080 to
 * U+009F (a terminal may read U+009B as CSI), format characters (Cf: the bidirectional overrides
 * and isolates U+202A-U+202E, U+2066-U+2069 that reorder what follows, zero-width characters),
 * the line and paragraph separators, and lone surrogates. Letters of every script, marks and
 * symbols are printed as they are: a TXT record in Unicode is legitimate.
 */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;

/** A character as dig writes a byte it will not print: `\DDD`, three decimal digits, per UTF-8 byte (RFC 1035 §5.1). */
const escaped = (char: string): string =>
  Array.from(utf8.encode(char), (byte) => `\\${String(byte).padStart(3, '0')}`).join('');

/**
 * `text` with every unsafe character written as dig does (`\027[2K` for ESC [2K, `\226\128\174`
 * for U+202E). A backslash is left as it is, so the function can be applied twice without harm
 * and a name the API already gives in RFC 1035 presentation form (`x\027y.example`) prints as dig
 * prints it; a TXT value that itself holds the four characters `\027` prints the same as one
 * holding ESC, and `--json` tells the two apart.
 */
export function terminalText(text: string): string {
  return text.replace(UNSAFE, escaped);
}

/** Outside a JSON string only ASCII whitespace can appear, so each match is inside one. */
const JSON_UNSAFE = /[\u007f-\u009f\p{Cf}\u2028\u2029]/gu;

/**
 * `value` as indented JSON that parses back to the same strings and writes no control to a
 * terminal: JSON.stringify escapes C0 controls (RFC 8259 §7) and lone surrogates, and here DEL,
 * the C1 controls and the format characters become `\uXXXX` escapes too.
 */
export function terminalJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(JSON_UNSAFE, (char) => {
    // A character beyond U+FFFF (a tag character is a format character) is its surrogate pair.
    let out = '';
    for (let i = 0; i < char.length; i++) out += `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`;
    return out;
  });
}
