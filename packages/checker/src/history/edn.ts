import {
  EdnChar,
  EdnDecimal,
  EdnFloat,
  EdnSet,
  EdnSymbol,
  ednTypeText,
  Keyword,
  Ratio,
  Tagged,
} from './edn-types.js';
import { HistoryParseError } from './errors.js';
import { exactNumber, JsonShapeError } from './json.js';
import {
  MAX_EVENT_BIG_DIGITS,
  MAX_EVENT_COLLECTIONS,
  MAX_EVENT_VALUES,
  MAX_INTEGER_DIGITS,
  MAX_NESTING,
} from './read-options.js';

export { EdnChar, EdnDecimal, EdnFloat, EdnSet, EdnSymbol, Keyword, Ratio, Tagged };

/**
 * An EDN map read as a JS Map, since EDN keys are often keywords rather than strings. Keyword keys
 * stay `Keyword` objects (one per name in a reader), so `{:a 1}` and `{":a" 1}` are different maps.
 */
export type EdnValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | Keyword
  | EdnSymbol
  | EdnChar
  | EdnFloat
  | Ratio
  | EdnDecimal
  | Tagged<EdnValue>
  | EdnSet<EdnValue>
  | EdnValue[]
  | Map<EdnValue, EdnValue>;

/** The value of keyword key `name` in an EDN map (`:name`), if there is one. */
export function keywordValue(map: Map<EdnValue, EdnValue>, name: string): EdnValue | undefined {
  for (const [k, v] of map) if (k instanceof Keyword && k.name === name) return v;
  return undefined;
}

// Char codes: whitespace (with the comma, which EDN treats as whitespace) and token delimiters.
const isWhitespace = (c: number): boolean => c === 32 || c === 44 || (c >= 9 && c <= 13);
const isDelimiter = (c: number): boolean =>
  isWhitespace(c) ||
  c === 40 ||
  c === 41 ||
  c === 91 ||
  c === 93 ||
  c === 123 ||
  c === 125 ||
  c === 34 ||
  c === 59 ||
  // A backslash ends a token, as in Clojure's reader (a terminating macro): `:a\;` is `:a` and the character `;`.
  c === 92;

// Named characters (`\\newline`), as EDN and Clojure write them.
const NAMED_CHARACTERS: Readonly<Record<string, string>> = Object.assign(Object.create(null), {
  newline: '\n',
  space: ' ',
  tab: '\t',
  return: '\r',
  formfeed: '\f',
  backspace: '\b',
});

// 16^830 < 10^1000 < 16^831: hex integers get the room decimal ones have (MAX_INTEGER_DIGITS).
const MAX_HEX_DIGITS = 830;

// Symbols: what Clojure prints, Java class names with `$` (`clojure.core$fn__123`) included.
const SYMBOL = /^[\p{L}*+!\-_?<>=/.$&%][\p{L}\p{N}*+!\-_?<>=/.#':$&%]*$/u;

// String escapes EDN allows, by the character after the backslash.
const ESCAPES: Readonly<Record<string, string>> = Object.assign(Object.create(null), {
  n: '\n',
  t: '\t',
  r: '\r',
  '"': '"',
  '\\': '\\',
  b: '\b',
  f: '\f',
});

/**
 * A reader for the EDN Jepsen histories hold: maps, vectors and lists (arrays), sets (`EdnSet`, in a
 * canonical order, so `#{1 2}` and `#{2 1}` read alike), keywords, strings, characters (`EdnChar`),
 * integers (big ones as bigint), floats (`EdnFloat`, `##Inf`, `##NaN` too), ratios, decimals, nil,
 * booleans, symbols (`EdnSymbol`; `$` and `&` allowed, as in Java class names), tagged literals
 * (`Tagged`), `#_` discards and `;` comments. Every type JSON lacks stays its own object (see
 * edn-types.ts), so values compare as Clojure's `=` does.
 * Tracks lines so every error names where it happened.
 */
export class EdnReader {
  #pos = 0;
  #line: number;
  // Collections open around the value being read: capped, so deep nesting is an error, not a stack overflow.
  #depth = 0;
  // Values and collections read so far (one reader reads one op): capped, so an op's objects stay bounded.
  #values = 0;
  #collections = 0;
  // Digits of ratios and decimals read so far: capped, as reducing them costs time (see MAX_EVENT_BIG_DIGITS).
  #bigDigits = 0;
  // Histories repeat a handful of keywords thousands of times: one object each.
  readonly #keywords = new Map<string, Keyword>();
  /** `firstLine`: the line `text` starts on in its file (for a piece of a larger file). */
  constructor(
    private readonly text: string,
    private readonly file: string,
    firstLine = 1,
  ) {
    this.#line = firstLine;
  }

  /** Line of the next unread character (1-based). */
  get line(): number {
    return this.#line;
  }

  /** True when only whitespace, comments and discarded (`#_`) values are left. */
  atEnd(): boolean {
    this.#skipAll();
    return this.#pos >= this.text.length;
  }

  /** Skips whitespace, comments and `#_` discards (each discarded value is read, so it counts toward the caps). */
  #skipAll(): void {
    for (;;) {
      this.#skip();
      if (this.text.charCodeAt(this.#pos) !== 35 || this.text.charCodeAt(this.#pos + 1) !== 95) return;
      // `#_ #_ #_ …` nests one read in another: capped like collections, so no stack overflows.
      if (this.#depth > MAX_NESTING) this.#fail(`discards nested at most ${MAX_NESTING} deep`, '#_');
      this.#pos += 2;
      this.read();
    }
  }

  /**
   * Reads one value; throws `HistoryParseError` on anything outside the subset, and on collections
   * nested deeper than `MAX_NESTING`.
   */
  read(): EdnValue {
    this.#depth++;
    try {
      return this.#readValue();
    } finally {
      this.#depth--;
    }
  }

  #readValue(): EdnValue {
    this.#skipAll();
    const c = this.text[this.#pos];
    if ((c === '{' || c === '[' || c === '(' || c === '#') && this.#depth > MAX_NESTING)
      this.#fail(`collections nested at most ${MAX_NESTING} deep`, this.#peekToken());
    if (c === undefined) this.#fail('an EDN value', 'end of input');
    if (++this.#values > MAX_EVENT_VALUES)
      this.#fail(`at most ${MAX_EVENT_VALUES} values in one op`, `${MAX_EVENT_VALUES + 1} or more`);
    if ((c === '{' || c === '[' || c === '(' || c === '#') && ++this.#collections > MAX_EVENT_COLLECTIONS)
      this.#fail(
        `at most ${MAX_EVENT_COLLECTIONS} collections in one op`,
        `${MAX_EVENT_COLLECTIONS + 1} or more`,
      );
    switch (c) {
      case '{':
        return this.#readMap();
      case '[':
        this.#pos++;
        return this.#readSeq(']');
      case '(':
        this.#pos++;
        return this.#readSeq(')');
      case '"':
        return this.#readString();
      case ':': {
        this.#pos++;
        const name = this.#readToken('a keyword name');
        let keyword = this.#keywords.get(name);
        if (keyword === undefined) {
          keyword = new Keyword(name);
          this.#keywords.set(name, keyword);
        }
        return keyword;
      }
      case '#':
        return this.#readDispatch();
      case '\\':
        return this.#readCharacter();
      default:
        return this.#readAtom();
    }
  }

  /** Opens a vector or list and returns its closing bracket, or undefined if the next value is no sequence. */
  openSequence(): ']' | ')' | undefined {
    this.#skip();
    const c = this.text[this.#pos];
    if (c === '[') {
      this.#pos++;
      return ']';
    }
    if (c === '(') {
      this.#pos++;
      return ')';
    }
    return undefined;
  }

  /** Consumes `close` if it is next (after whitespace) and says whether it did. */
  tryClose(close: string): boolean {
    this.#skip();
    if (this.text[this.#pos] === close) {
      this.#pos++;
      return true;
    }
    return false;
  }

  /** After `#`: a set, a symbolic value (`##Inf`), or a tagged literal (`#inst "…"`, `#object[…]`, a record). */
  #readDispatch(): EdnValue {
    const next = this.text[this.#pos + 1];
    if (next === '{') {
      this.#pos += 2;
      return new EdnSet(inCanonicalOrder(this.#readSeq('}')));
    }
    if (next === '#') {
      this.#pos += 2;
      const name = this.#readToken('##Inf, ##-Inf or ##NaN');
      if (name === 'Inf') return new EdnFloat(Number.POSITIVE_INFINITY);
      if (name === '-Inf') return new EdnFloat(Number.NEGATIVE_INFINITY);
      if (name === 'NaN') return new EdnFloat(Number.NaN);
      return this.#fail('##Inf, ##-Inf or ##NaN', `##${name}`);
    }
    this.#pos++;
    const start = this.#pos;
    // The tag ends where its value may begin: `#object[`, `#inst"…"`, `#jepsen.foo.Bar{`.
    while (this.#pos < this.text.length && !isDelimiter(this.text.charCodeAt(this.#pos))) this.#pos++;
    const tag = this.text.slice(start, this.#pos);
    if (!/^\p{L}/u.test(tag) || !SYMBOL.test(tag)) this.#fail('a tag (a symbol) after #', `#${tag}`);
    this.#skipAll();
    if (this.#pos >= this.text.length) this.#fail(`a value for the tag #${tag}`, 'end of input');
    return new Tagged(tag, this.read());
  }

  /** `\c`, `\newline`, `\u00e9`: a character (never `=` to the one-character string). */
  #readCharacter(): EdnChar {
    return new EdnChar(this.#readCharacterText());
  }

  #readCharacterText(): string {
    const start = ++this.#pos;
    if (start >= this.text.length) this.#fail('a character after \\', 'end of input');
    // The first character is taken whatever it is (`\(`, `\ `); a name runs on to the next delimiter.
    this.#pos++;
    while (
      this.#pos < this.text.length &&
      !isDelimiter(this.text.charCodeAt(this.#pos)) &&
      this.text.charCodeAt(this.#pos) !== 92
    )
      this.#pos++;
    const name = this.text.slice(start, this.#pos);
    if (name.length === 1) {
      if (name === '\n') this.#line++;
      return name;
    }
    const named = NAMED_CHARACTERS[name];
    if (named !== undefined) return named;
    if (/^u[0-9a-fA-F]{4}$/.test(name)) return String.fromCharCode(Number.parseInt(name.slice(1), 16));
    return this.#fail('a character (\\c, \\newline, \\space, \\tab, \\uXXXX)', `\\${name}`);
  }

  #readMap(): Map<EdnValue, EdnValue> {
    this.#pos++;
    const map = new Map<EdnValue, EdnValue>();
    for (;;) {
      this.#skipAll();
      if (this.text[this.#pos] === '}') {
        this.#pos++;
        return map;
      }
      if (this.#pos >= this.text.length) this.#fail('"}" closing a map', 'end of input');
      const key = this.read();
      this.#skipAll();
      if (this.text[this.#pos] === '}') this.#fail(`a value for map key ${ednText(key)}`, '}');
      // Keyword keys stay keywords (interned, so equal names are one key): `{":a" 1}` is not `{:a 1}`.
      map.set(key, this.read());
    }
  }

  #readSeq(close: string): EdnValue[] {
    const items: EdnValue[] = [];
    for (;;) {
      this.#skipAll();
      if (this.text[this.#pos] === close) {
        this.#pos++;
        return items;
      }
      if (this.#pos >= this.text.length) this.#fail(`"${close}" closing a collection`, 'end of input');
      items.push(this.read());
    }
  }

  #readString(): string {
    // Fast path: no escapes and no newlines before the closing quote.
    const close = this.text.indexOf('"', this.#pos + 1);
    if (close !== -1) {
      const raw = this.text.slice(this.#pos + 1, close);
      if (!raw.includes('\\') && !raw.includes('\n')) {
        this.#pos = close + 1;
        return raw;
      }
    }
    // Pieces joined once: adding one character at a time builds a rope of one node per character.
    const parts: string[] = [];
    let from = this.#pos + 1;
    let i = from;
    for (;;) {
      const c = this.text.charCodeAt(i);
      if (Number.isNaN(c)) this.#fail('a closing quote', 'end of input');
      if (c === 34) break;
      if (c === 10) this.#line++;
      else if (c === 92) {
        const e = this.text[i + 1];
        // `\u00e9`, as Clojure reads it.
        const hex = e === 'u' ? /^[0-9a-fA-F]{4}/.exec(this.text.slice(i + 2, i + 6)) : null;
        if (hex !== null) {
          parts.push(this.text.slice(from, i), String.fromCharCode(Number.parseInt(hex[0], 16)));
          i += 6;
          from = i;
          continue;
        }
        const m = e === undefined ? undefined : ESCAPES[e];
        if (m === undefined)
          this.#fail('a string escape (\\n \\t \\r \\b \\f \\" \\\\ \\uXXXX)', `\\${e ?? ''}`);
        parts.push(this.text.slice(from, i), m);
        i += 2;
        from = i;
        continue;
      }
      i++;
    }
    parts.push(this.text.slice(from, i));
    this.#pos = i + 1;
    return parts.join('');
  }

  #readAtom(): EdnValue {
    const token = this.#readToken('a value');
    if (token === 'nil') return null;
    if (token === 'true') return true;
    if (token === 'false') return false;
    if (token.length < 10 && /^-?\d+$/.test(token)) return Number(token);
    // Integers stay exact: a number when safe, else a bigint (`N` marks a big integer, the same
    // category as any integer under Clojure's =).
    if (/^[+-]?\d+N?$/.test(token)) return this.#integer(token.replace(/^\+|N$/g, ''));
    // Floats and decimals (`M`) are numbers of their own kind: (= 1 1.0) and (= 1 1M) are false.
    const decimal = /^[+-]?\d+(\.\d*)?([eE][+-]?\d+)?M$/.exec(token);
    if (decimal !== null) {
      if (token.length > MAX_INTEGER_DIGITS + 10)
        this.#fail(`decimals of at most ${MAX_INTEGER_DIGITS} digits`, `${token.length} characters`);
      this.#countBigDigits(digitCount(token));
      return new EdnDecimal(token.slice(0, -1));
    }
    if (/^[+-]?(\d+\.\d*|\d+)([eE][+-]?\d+)?$/.test(token)) return new EdnFloat(Number(token));
    // Clojure's hex integers (`#object[java.lang.Thread 0x1a2b …]` prints identity hashes so): at most
    // 830 hex digits, the most that stays under 10^1000, as decimal integers are capped at 1000 digits.
    const hex = /^([+-]?)0[xX]([0-9a-fA-F]+)N?$/.exec(token);
    if (hex !== null) {
      const digits = (hex[2] as string).replace(/^0+(?=.)/, '');
      if (digits.length > MAX_HEX_DIGITS)
        this.#fail(`hex integers of at most ${MAX_HEX_DIGITS} digits`, `${digits.length} digits`);
      const n = BigInt(`0x${digits}`) * (hex[1] === '-' ? -1n : 1n);
      return Number.isSafeInteger(Number(n)) ? Number(n) : n;
    }
    const ratio = /^([+-]?\d+)\/(\d+)$/.exec(token);
    if (ratio !== null) {
      const [numerator, denominator] = [ratio[1] as string, ratio[2] as string];
      if (numerator.length > MAX_INTEGER_DIGITS + 1 || denominator.length > MAX_INTEGER_DIGITS)
        this.#fail(`ratios of integers of at most ${MAX_INTEGER_DIGITS} digits`, token.slice(0, 20));
      this.#countBigDigits(digitCount(token));
      const d = BigInt(denominator);
      if (d === 0n) this.#fail('a ratio with a denominator other than 0', token);
      const r = new Ratio(BigInt(numerator.replace(/^\+/, '')), d);
      // Clojure reads a ratio that reduces to an integer (4/2) as that integer.
      if (r.denominator === 1n) return this.#integer(r.numerator.toString());
      return r;
    }
    if (SYMBOL.test(token)) return new EdnSymbol(token);
    return this.#fail('a value', token);
  }

  #countBigDigits(digits: number): void {
    this.#bigDigits += digits;
    if (this.#bigDigits > MAX_EVENT_BIG_DIGITS)
      this.#fail(
        `at most ${MAX_EVENT_BIG_DIGITS} digits of ratios and decimals in one op`,
        `${this.#bigDigits} or more`,
      );
  }

  #integer(token: string): number | bigint {
    try {
      return exactNumber(token);
    } catch (error) {
      if (error instanceof JsonShapeError) this.#fail(error.expected, error.found);
      throw error;
    }
  }

  #readToken(what: string): string {
    const start = this.#pos;
    while (this.#pos < this.text.length && !isDelimiter(this.text.charCodeAt(this.#pos))) this.#pos++;
    if (this.#pos === start) this.#fail(what, this.#peekToken());
    return this.text.slice(start, this.#pos);
  }

  #peekToken(): string {
    return this.text.slice(this.#pos, this.#pos + 20).split('\n')[0] ?? '';
  }

  #skip(): void {
    const t = this.text;
    while (this.#pos < t.length) {
      const c = t.charCodeAt(this.#pos);
      if (c === 10) {
        this.#line++;
        this.#pos++;
      } else if (c === 59) {
        const end = t.indexOf('\n', this.#pos);
        this.#pos = end === -1 ? t.length : end;
      } else if (isWhitespace(c)) {
        this.#pos++;
      } else {
        return;
      }
    }
  }

  #fail(expected: string, found: string): never {
    throw new HistoryParseError(this.file, this.#line, expected, found);
  }
}

/**
 * A set's elements in one order whatever order the text wrote them in: a set has none, and models
 * compare values as written, so `#{2 1}` read back after writing `#{1 2}` was a false conviction.
 * Sorted by each element's canonical text (map entries sorted too); any fixed total order will do.
 */
function inCanonicalOrder(items: EdnValue[]): EdnValue[] {
  if (items.length < 2) return items;
  const keyed = items.map((item) => [canonical(item), item] as const);
  keyed.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return keyed.map(([, item]) => item);
}

function canonical(value: EdnValue): string {
  return ednText(value);
}

/** An EDN value written back as EDN text (for messages): keywords with their colon, strings quoted. */
export function ednText(value: EdnValue): string {
  if (value === null) return 'nil';
  if (Array.isArray(value)) return `[${value.map(ednText).join(' ')}]`;
  if (value instanceof Map)
    return `{${[...value].map(([k, v]) => `${ednText(k)} ${ednText(v)}`).join(', ')}}`;
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' && !Number.isFinite(value))
    return Number.isNaN(value) ? '##NaN' : value > 0 ? '##Inf' : '##-Inf';
  return ednTypeText(value, (v) => ednText(v as EdnValue), false) ?? String(value);
}

/** The decimal digits in a number's token (its sign, point, exponent mark, `/` and `M` left out). */
function digitCount(token: string): number {
  let n = 0;
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i);
    if (c >= 48 && c <= 57) n++;
  }
  return n;
}
