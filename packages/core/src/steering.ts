/**
 * Characters that steer how text is shown rather than being shown: bidirectional overrides,
 * embeddings, isolates and marks (U+061C, U+200E/F, U+202A–E, U+2066–9), which reorder what a reader
 * sees (`invoice-\u202Etxt.exe` reads as `invoice-exe.txt`), and the line and paragraph separators
 * U+2028/U+2029, which many log viewers and editors break lines on (a forged log line). They are not
 * control characters (`\p{Cc}`), so JSON and the C0/C1 escaping let them through.
 */
export const STEERING = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/gu;

/** `text` with every steering character written as a `\uXXXX` escape. */
export function escapeSteering(text: string): string {
  return text.replace(STEERING, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
