import { MAX_EVENT_COLLECTIONS, MAX_EVENT_VALUES, MAX_INTEGER_DIGITS, MAX_NESTING } from './read-options.js';

/** Why a JSON text was refused before or while parsing it. */
export class JsonShapeError extends Error {
  constructor(
    readonly expected: string,
    readonly found: string,
  ) {
    super(`expected ${expected}, found ${found}`);
  }
}

const SIXTEEN_DIGITS = /\d{16}/;

/**
 * `JSON.parse` that keeps integers exact and refuses deep nesting. Integers beyond 2^53 − 1 (which
 * `JSON.parse` silently rounds: 2^53 + 1 reads as 2^53) become bigints; every safe integer and every
 * number with a fraction or exponent stays a number. Nesting deeper than `MAX_NESTING` throws
 * `JsonShapeError`; invalid JSON throws `SyntaxError`. One linear scan decides whether the native
 * parser's answer is exact; only lines with a 16-digit integer are parsed again, exactly.
 */
export function parseJsonExact(text: string): unknown {
  // Fast path for typical lines: nesting D takes at least 2D characters, and an integer JSON.parse
  // could round has 16 digits in a row.
  if (text.length < 2 * (MAX_NESTING + 1) && !SIXTEEN_DIGITS.test(text)) return JSON.parse(text);
  const { depth, longInteger, collections, values } = scan(text);
  if (depth > MAX_NESTING) {
    throw new JsonShapeError(`values nested at most ${MAX_NESTING} deep`, `${depth} levels`);
  }
  if (collections > MAX_EVENT_COLLECTIONS) {
    throw new JsonShapeError(
      `at most ${MAX_EVENT_COLLECTIONS} arrays and objects in one event`,
      `${MAX_EVENT_COLLECTIONS + 1} or more`,
    );
  }
  if (values > MAX_EVENT_VALUES)
    throw new JsonShapeError(
      `at most ${MAX_EVENT_VALUES} values in one event`,
      `${MAX_EVENT_VALUES + 1} or more`,
    );
  const value: unknown = JSON.parse(text);
  return longInteger ? parseValidJson(text) : value;
}

/**
 * Deepest nesting, and whether some integer has 16 or more digits (every integer with fewer is below
 * 2^53, so `JSON.parse` reads it exactly). Strings are skipped, escapes included. Also counts the
 * collections, and the values as collections plus separators (an upper bound: n items take n − 1
 * commas), so an event that would build too many objects is refused before `JSON.parse` builds them.
 */
function scan(text: string): { depth: number; longInteger: boolean; collections: number; values: number } {
  let collections = 0;
  let commas = 0;
  let depth = 0;
  let deepest = 0;
  let longInteger = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 92) i++;
        else if (d === 34) break;
      }
    } else if (c === 44) {
      if (++commas > MAX_EVENT_VALUES) break;
    } else if (c === 91 || c === 123) {
      if (++collections > MAX_EVENT_COLLECTIONS) break;
      if (++depth > deepest) deepest = depth;
      // Past the cap the answer is known; the rest of a hostile line need not be scanned.
      if (deepest > MAX_NESTING) break;
    } else if (c === 93 || c === 125) {
      depth--;
    } else if (c >= 48 && c <= 57) {
      let j = i + 1;
      while (j < n && isDigit(text.charCodeAt(j))) j++;
      const after = text.charCodeAt(j);
      // A fraction's or exponent's digits, or an integer part followed by either: not an integer.
      const partOfFloat = after === 46 || after === 101 || after === 69 || isFloatTail(text, i);
      if (j - i >= 16 && !partOfFloat) longInteger = true;
      i = j - 1;
    }
  }
  return { depth: deepest, longInteger, collections, values: collections + commas };
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** True when the digits starting at `i` follow a `.` or an exponent marker (with its sign). */
function isFloatTail(text: string, i: number): boolean {
  let before = text.charCodeAt(i - 1);
  if (before === 43 || before === 45) before = text.charCodeAt(i - 2);
  return before === 46 || before === 101 || before === 69;
}

type Frame = { items: unknown[]; object?: undefined } | { object: Record<string, unknown>; key: string };

/**
 * Parses text that `JSON.parse` has already accepted, without recursion (the depth is capped
 * anyway), turning integers beyond 2^53 − 1 into bigints. Strings go through `JSON.parse` for their
 * escapes; keys are defined as own properties, so `"__proto__"` stays data, as with `JSON.parse`.
 */
function parseValidJson(text: string): unknown {
  const stack: Frame[] = [];
  let i = 0;
  for (;;) {
    i = skipSpace(text, i);
    let value: unknown;
    const c = text.charCodeAt(i);
    if (c === 123) {
      i = skipSpace(text, i + 1);
      if (text.charCodeAt(i) === 125) {
        i++;
        value = {};
      } else {
        const [key, next] = readKey(text, i);
        stack.push({ object: {}, key });
        i = next;
        continue;
      }
    } else if (c === 91) {
      i = skipSpace(text, i + 1);
      if (text.charCodeAt(i) === 93) {
        i++;
        value = [];
      } else {
        stack.push({ items: [] });
        continue;
      }
    } else if (c === 34) {
      const end = stringEnd(text, i);
      value = JSON.parse(text.slice(i, end));
      i = end;
    } else if (c === 116) {
      value = true;
      i += 4;
    } else if (c === 102) {
      value = false;
      i += 5;
    } else if (c === 110) {
      value = null;
      i += 4;
    } else {
      let end = i + 1;
      while (end < text.length && isNumberChar(text.charCodeAt(end))) end++;
      value = exactNumber(text.slice(i, end));
      i = end;
    }
    // Store the value in its container; close every container that ends right after it.
    for (;;) {
      const top = stack[stack.length - 1];
      if (top === undefined) return value;
      if (top.object === undefined) top.items.push(value);
      else
        Object.defineProperty(top.object, top.key, {
          value,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      i = skipSpace(text, i);
      const separator = text.charCodeAt(i++);
      if (separator === 44) {
        if (top.object !== undefined) {
          const [key, next] = readKey(text, skipSpace(text, i));
          top.key = key;
          i = next;
        }
        break;
      }
      stack.pop();
      value = top.object ?? top.items;
    }
  }
}

/**
 * An integer token as a number when that is exact, else a bigint; any other number as JSON reads it.
 * Past `MAX_INTEGER_DIGITS` digits it throws `JsonShapeError`: converting a digit string to a bigint
 * and back takes time that grows faster than its length (seconds for a few million digits).
 */
export function exactNumber(token: string): number | bigint {
  const n = Number(token);
  if (Number.isSafeInteger(n) || !/^-?\d+$/.test(token)) return n;
  const digits = token.length - (token.charCodeAt(0) === 45 ? 1 : 0);
  if (digits > MAX_INTEGER_DIGITS) {
    throw new JsonShapeError(`integers of at most ${MAX_INTEGER_DIGITS} digits`, `${digits} digits`);
  }
  return BigInt(token);
}

function isNumberChar(c: number): boolean {
  return isDigit(c) || c === 45 || c === 43 || c === 46 || c === 101 || c === 69;
}

function skipSpace(text: string, i: number): number {
  let j = i;
  for (;;) {
    const c = text.charCodeAt(j);
    if (c === 32 || c === 9 || c === 10 || c === 13) j++;
    else return j;
  }
}

/** Index just past the string that opens at `i`. */
function stringEnd(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 92) j++;
    else if (c === 34) return j + 1;
  }
  return text.length;
}

/** The object key at `i` and the index just past its colon. */
function readKey(text: string, i: number): [string, number] {
  const end = stringEnd(text, i);
  const key = JSON.parse(text.slice(i, end)) as string;
  return [key, skipSpace(text, end) + 1];
}
