import { HistoryParseError } from './errors.js';
import { exactNumber, JsonShapeError } from './json.js';
import { MAX_EVENT_COLLECTIONS, MAX_EVENT_VALUES, MAX_NESTING } from './read-options.js';

/** An EDN keyword, kept apart from strings while reading so `:nemesis` and `"nemesis"` can be told apart. */
export class Keyword {
  constructor(readonly name: string) {}
  toString(): string {
    return `:${this.name}`;
  }
}

/**
 * A tagged literal: `#inst "…"`, `#uuid "…"`, `#object[…]`, a record `#jepsen.foo.Bar{…}`: the tag
 * (without `#`) and the value it tags. Kept apart from the plain value so nothing reads alike by accident.
 */
export class Tagged {
  constructor(
    readonly tag: string,
    readonly value: EdnValue,
  ) {}
}

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
  | Tagged
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
  c === 59;

// Named characters (`\\newline`), as EDN and Clojure write them.
const NAMED_CHARACTERS: Readonly<Record<string, string>> = Object.assign(Object.create(null), {
  newline: '\n',
  space: ' ',
  tab: '\t',
  return: '\r',
  formfeed: '\f',
  backspace: '\b',
});

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
 * A reader for the EDN Jepsen histories hold: maps, vectors, lists, sets (as arrays in a canonical
 * order, so `#{1 2}` and `#{2 1}` read alike), keywords, strings, characters (as strings), integers
 * (big ones as bigint), floats (`##Inf`, `##NaN` too), nil, booleans, symbols (as strings; `$` and
 * `&` allowed, as in Java class names), tagged literals (`Tagged`), `#_` discards and `;` comments.
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
      return inCanonicalOrder(this.#readSeq('}'));
    }
    if (next === '#') {
      this.#pos += 2;
      const name = this.#readToken('##Inf, ##-Inf or ##NaN');
      if (name === 'Inf') return Number.POSITIVE_INFINITY;
      if (name === '-Inf') return Number.NEGATIVE_INFINITY;
      if (name === 'NaN') return Number.NaN;
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

  /** `\c`, `\newline`, `\u00e9`: a character, read as a one-character string. */
  #readCharacter(): string {
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
    // Integers stay exact: a number when safe, else a bigint (`N` marks a big integer, `M` a decimal
    // that is an integer here).
    if (/^[+-]?\d+[NM]?$/.test(token)) {
      try {
        return exactNumber(token.replace(/^\+|[NM]$/g, ''));
      } catch (error) {
        if (error instanceof JsonShapeError) this.#fail(error.expected, error.found);
        throw error;
      }
    }
    if (/^[+-]?(\d+\.\d*|\d+)([eE][+-]?\d+)?M?$/.test(token)) return Number(token.replace(/M$/, ''));
    // Clojure's hex integers (`#object[java.lang.Thread 0x1a2b …]` prints identity hashes so) and ratios.
    const hex = /^([+-]?)0[xX]([0-9a-fA-F]{1,250})N?$/.exec(token);
    if (hex !== null) {
      const n = BigInt(`0x${hex[2]}`) * (hex[1] === '-' ? -1n : 1n);
      return Number.isSafeInteger(Number(n)) ? Number(n) : n;
    }
    const ratio = /^([+-]?\d{1,300})\/(\d{1,300})$/.exec(token);
    if (ratio !== null) return Number(ratio[1]) / Number(ratio[2]);
    if (SYMBOL.test(token)) return token;
    return this.#fail('a value', token);
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
  if (value === null) return 'nil';
  if (value instanceof Keyword) return value.toString();
  if (value instanceof Tagged) return `#${value.tag} ${canonical(value.value)}`;
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(' ')}]`;
  if (value instanceof Map) {
    const entries = [...value].map(([k, v]) => `${canonical(k)} ${canonical(v)}`);
    return `{${entries.sort().join(', ')}}`;
  }
  return String(value);
}

/** An EDN value written back as EDN text (for messages): keywords with their colon, strings quoted. */
export function ednText(value: EdnValue): string {
  if (value === null) return 'nil';
  if (value instanceof Keyword) return value.toString();
  if (value instanceof Tagged) return `#${value.tag} ${ednText(value.value)}`;
  if (Array.isArray(value)) return `[${value.map(ednText).join(' ')}]`;
  if (value instanceof Map)
    return `{${[...value].map(([k, v]) => `${ednText(k)} ${ednText(v)}`).join(', ')}}`;
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' && !Number.isFinite(value))
    return Number.isNaN(value) ? '##NaN' : value > 0 ? '##Inf' : '##-Inf';
  return String(value);
}
