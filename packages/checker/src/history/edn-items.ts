import { HistoryParseError } from './errors.js';
import { MAX_NESTING } from './read-options.js';

/** One top-level value of an EDN history (an op map, if the history is well formed) and its first line. */
export interface EdnItem {
  text: string;
  line: number;
}

/**
 * Cuts an EDN history, fed one line at a time, into its top-level items, holding only the item being
 * read: the history may be one vector (or list) of op maps, as Jepsen writes it, or op maps one after
 * another, as porcupine's kv files have them. It only tracks what decides where an item ends —
 * brackets, strings, comments, `\c` characters, and tags and `#_` discards that wait for the value
 * after them (`#jepsen.history.Op{…}`, even across a line end) — and leaves the reading of each item to `EdnReader`,
 * so any item EDN allows passes through. Items longer than `maxChars` and brackets nested deeper than
 * `MAX_NESTING` are bad input, named by line.
 */
export class EdnItemSplitter {
  /** `unknown` until the first value shows whether the history is wrapped in a vector or list. */
  #layout: 'unknown' | 'wrapped' | 'loose' | 'closed' = 'unknown';
  #close = 0;
  #closeLine = 0;
  /** Brackets open inside the current item; 0 outside one or inside an atom. */
  #depth = 0;
  #inItem = false;
  #inString = false;
  /** Inside an atom at the item's top level (`nil`, `42`, a tag such as `#object`). */
  #inAtom = false;
  /** The current top-level atom is a tag (`#inst`) or a discard (`#_`): a value must follow it. */
  #atomPrefix = false;
  /** Values the item still needs: 1, plus one for each `#_` inside a tag chain (`#t #_ a b`). */
  #needed = 0;
  /** Tag and discard prefixes seen in the current item, and where the current atom began on its line. */
  #prefixes = 0;
  #atomStart = 0;
  /** The item so far, as pieces of the lines it spans, and their length in characters. */
  #pieces: string[] = [];
  #chars = 0;
  #itemLine = 0;
  #line = 0;

  constructor(
    private readonly file: string,
    private readonly maxChars: number,
  ) {}

  /** Feeds line `line` (without its line end); returns the items that end on it. */
  push(text: string, line: number): EdnItem[] {
    this.#line = line;
    const done: EdnItem[] = [];
    let start = this.#inItem ? 0 : -1;
    const n = text.length;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      if (this.#inString) {
        if (c === 92) i++;
        else if (c === 34) {
          this.#inString = false;
          if (this.#depth === 0) start = this.#valueDone(done, text, start, i + 1);
        }
        continue;
      }
      if (this.#inAtom) {
        // An atom ends at whitespace, a comment, a bracket, a quote (`nil]`, `#object[`, `#inst"…"`) or a
        // backslash, which starts a character (as in the reader and in Clojure's: `:a\;` is `:a` then `\;`).
        if (isWhitespace(c) || c === 59 || isBracket(c) || c === 34 || (c === 92 && i > this.#atomStart)) {
          start = this.#atomDone(done, text, start, i);
          i--;
        }
        continue;
      }
      if (isWhitespace(c)) continue;
      if (c === 59) break; // a comment runs to the end of the line (kept inside an item)
      if (!this.#inItem) {
        if (this.#layout === 'closed') this.#fail('end of input after the history', text.slice(i));
        if (c === 93 || c === 41 || c === 125) {
          if (this.#layout === 'wrapped' && c === this.#close) {
            this.#layout = 'closed';
            continue;
          }
          this.#fail('a value', String.fromCharCode(c));
        }
        if (this.#layout === 'unknown') {
          if (c === 91 || c === 40) {
            this.#layout = 'wrapped';
            this.#close = c === 91 ? 93 : 41;
            this.#closeLine = line;
            continue;
          }
          this.#layout = 'loose';
        }
        this.#inItem = true;
        this.#needed = 1;
        this.#prefixes = 0;
        this.#itemLine = line;
        start = i;
      }
      if (this.#depth === 0) {
        if (c === 93 || c === 41 || c === 125) this.#fail('a value after the tag', String.fromCharCode(c));
        if (c !== 34 && c !== 91 && c !== 40 && c !== 123) {
          // An atom at the item's top level; `#x` (but `##Inf` and `#{`) is a tag or discard prefix.
          this.#inAtom = true;
          this.#atomStart = i;
          const next = text.charCodeAt(i + 1);
          this.#atomPrefix = c === 35 && next !== 35 && next !== 123;
          if (c === 35 && next === 123) {
            // `#{`: a set, read as a bracket below.
            this.#inAtom = false;
            i++;
            this.#depth = 1;
            continue;
          }
          if (c === 92) i++;
          continue;
        }
      }
      if (c === 34) this.#inString = true;
      else if (c === 92)
        i++; // `\[` is a character, not a bracket
      else if (c === 91 || c === 40 || c === 123) {
        if (++this.#depth > MAX_NESTING)
          this.#fail(`collections nested at most ${MAX_NESTING} deep`, text.slice(i, i + 20));
      } else if (c === 93 || c === 41 || c === 125) {
        if (--this.#depth === 0) start = this.#valueDone(done, text, start, i + 1);
      }
    }
    // A line end ends an atom (it is whitespace); anything else goes on to the next line. A lone `\`
    // ending the line is the character newline, as inside a collection, where the line end is kept.
    if (this.#inAtom && this.#atomStart === n - 1 && text.charCodeAt(n - 1) === 92) {
      this.#inAtom = false;
      start = this.#valueDone(done, `${text}\n`, start, n + 1);
    } else if (this.#inAtom) start = this.#atomDone(done, text, start, n);
    if (this.#inItem) {
      // The item goes on: keep the rest of this line and its line end, so the reader counts lines right.
      this.#append(text.slice(start));
      this.#append('\n');
    }
    return done;
  }

  /** The top-level atom ended at `end`: a value, or a prefix that waits for one. */
  #atomDone(done: EdnItem[], text: string, start: number, end: number): number {
    this.#inAtom = false;
    if (!this.#atomPrefix) return this.#valueDone(done, text, start, end);
    // A discard inside a tag chain consumes a value of its own; a leading one makes an item of its own
    // (which the reader skips).
    if (text.slice(this.#atomStart, end) === '#_' && this.#prefixes > 0) this.#needed++;
    this.#prefixes++;
    this.#atomPrefix = false;
    return start;
  }

  /** A value ended at `end` at the item's top level: the item ends when it needs no more. */
  #valueDone(done: EdnItem[], text: string, start: number, end: number): number {
    if (--this.#needed > 0) return start;
    return this.#finish(done, text, start, end);
  }

  /** Call at the end of input: returns the last item (an atom may end there), or throws if one is cut off. */
  end(): EdnItem[] {
    const done: EdnItem[] = [];
    if (this.#inItem) {
      if (this.#inString) this.#fail('a closing quote', 'end of input');
      if (this.#depth > 0) this.#fail('a closing bracket', 'end of input');
      this.#finish(done, '', 0, 0);
    }
    if (this.#layout === 'wrapped') {
      throw new HistoryParseError(
        this.file,
        this.#line,
        `"${String.fromCharCode(this.#close)}" closing the history opened on line ${this.#closeLine}`,
        'end of input',
      );
    }
    return done;
  }

  /** Ends the current item at `end` of `text` (from `start`); returns where the next item may start. */
  #finish(done: EdnItem[], text: string, start: number, end: number): number {
    this.#append(text.slice(start, end));
    done.push({ text: this.#pieces.join(''), line: this.#itemLine });
    this.#pieces = [];
    this.#chars = 0;
    this.#inItem = false;
    this.#depth = 0;
    return -1;
  }

  #append(piece: string): void {
    this.#chars += piece.length;
    if (this.#chars > this.maxChars)
      this.#fail(`an op of at most ${this.maxChars} characters`, 'a longer one');
    this.#pieces.push(piece);
  }

  #fail(expected: string, found: string): never {
    throw new HistoryParseError(this.file, this.#line, expected, found);
  }
}

function isBracket(c: number): boolean {
  return c === 91 || c === 93 || c === 40 || c === 41 || c === 123 || c === 125;
}

// EDN whitespace: the usual, and the comma.
function isWhitespace(c: number): boolean {
  return c === 32 || c === 44 || (c >= 9 && c <= 13);
}
