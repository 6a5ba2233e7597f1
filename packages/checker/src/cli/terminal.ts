/**
 * Text from a history (keys, op names, values, file names) reaches the terminal only escaped: ESC
 * (C0) and CSI (C1) sequences could recolour, move the cursor, retitle the window or hide lines, and
 * bidirectional overrides can make a line read differently from what it says.
 */

/** One line of human output: every control character (line feed included) as a visible escape. */
export function escapeLine(text: string): string {
  return replaceUnsafe(text, (c) => isControl(c) || c === 0x0a || c === 0x09, visible);
}

/** Multi-line human output (help, a stack trace): as `escapeLine`, but line feeds and tabs stay. */
export function escapeText(text: string): string {
  return replaceUnsafe(text, isControl, visible);
}

/**
 * JSON text made terminal-safe with `\uXXXX` escapes, which leave the JSON's value unchanged:
 * JSON.stringify escapes C0 itself but leaves DEL, C1 and the bidi controls raw.
 */
export function escapeJson(json: string): string {
  return replaceUnsafe(json, isControl, (c) => `\\u${hex(c, 4)}`);
}

/**
 * C0 but tab and line feed, DEL, C1, the bidi embedding, override and isolate controls, the bidi marks
 * (LRM, RLM, ALM: they reorder neutral text around them) and the line and paragraph separators U+2028
 * and U+2029 (some terminals and viewers break the line there, so one line of output would read as two).
 */
function isControl(c: number): boolean {
  return (
    (c < 0x20 && c !== 0x09 && c !== 0x0a) ||
    (c >= 0x7f && c <= 0x9f) ||
    c === 0x200e ||
    c === 0x200f ||
    c === 0x061c ||
    c === 0x2028 ||
    c === 0x2029 ||
    (c >= 0x202a && c <= 0x202e) ||
    (c >= 0x2066 && c <= 0x2069)
  );
}

function replaceUnsafe(text: string, unsafe: (c: number) => boolean, show: (c: number) => string): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (!unsafe(c)) continue;
    out += text.slice(from, i) + show(c);
    from = i + 1;
  }
  return from === 0 ? text : out + text.slice(from);
}

function visible(c: number): string {
  return c < 0x100 ? `\\x${hex(c, 2)}` : `\\u${hex(c, 4)}`;
}

function hex(c: number, width: number): string {
  return c.toString(16).padStart(width, '0');
}
