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

/** An EDN map read as a JS Map, since EDN keys are often keywords rather than strings. */
export type EdnValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | Keyword
  | EdnValue[]
  | Map<EdnValue, EdnValue>;

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

// String escapes EDN allows, by the character after the backslash.
const ESCAPES: Readonly<Record<string, string>> = Object.assign(Object.create(null), {
  n: '\n',
  t: '\t',
  r: '\r',
  '"': '"',
  '\\': '\\',
});

/**
 * A small reader for the EDN subset Jepsen histories use: maps, vectors, lists, sets (as arrays in a
 * canonical order, so `#{1 2}` and `#{2 1}` read alike),
 * keywords, strings, integers (big ones as bigint), floats, nil, booleans, symbols (as strings) and
 * `;` comments. Tracks lines so every error names where it happened.
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

  /** True when only whitespace and comments are left. */
  atEnd(): boolean {
    this.#skip();
    return this.#pos >= this.text.length;
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
    this.#skip();
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
        if (this.text[this.#pos + 1] === '{') {
          this.#pos += 2;
          return inCanonicalOrder(this.#readSeq('}'));
        }
        return this.#fail('a value (tagged literals are not supported)', this.#peekToken());
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

  #readMap(): Map<EdnValue, EdnValue> {
    this.#pos++;
    const map = new Map<EdnValue, EdnValue>();
    for (;;) {
      this.#skip();
      if (this.text[this.#pos] === '}') {
        this.#pos++;
        return map;
      }
      if (this.#pos >= this.text.length) this.#fail('"}" closing a map', 'end of input');
      const key = this.read();
      this.#skip();
      if (this.text[this.#pos] === '}') this.#fail(`a value for map key ${String(key)}`, '}');
      map.set(key instanceof Keyword ? key.toString() : key, this.read());
    }
  }

  #readSeq(close: string): EdnValue[] {
    const items: EdnValue[] = [];
    for (;;) {
      this.#skip();
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
        const m = e === undefined ? undefined : ESCAPES[e];
        if (m === undefined) this.#fail('a string escape (\\n \\t \\r \\" \\\\)', `\\${e ?? ''}`);
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
    if (/^[A-Za-z*+!\-_?<>=/.][\w*+!\-_?<>=/.#']*$/.test(token)) return token;
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
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(' ')}]`;
  if (value instanceof Map) {
    const entries = [...value].map(([k, v]) => `${canonical(k)} ${canonical(v)}`);
    return `{${entries.sort().join(', ')}}`;
  }
  return String(value);
}
