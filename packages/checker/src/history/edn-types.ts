import { showValue } from './show.js';

/**
 * EDN values that JSON has no type for. Histories read from EDN keep them as these objects, so values
 * compare as Clojure's `=` compares them (what knossos and jepsen.independent use): the keyword `:a`
 * is not the string `"a"`, `1.0` is not `1`, `1/2` is not `0.5`, `#{1}` is not `[1]`. EDN strings,
 * integers, nil, booleans, vectors and lists stay plain JS (vectors and lists are `=` in Clojure too).
 * `text` is each one written as EDN, which is both how messages show it and its canonical form.
 */

/** An EDN keyword (`:a`, `:ns/a`); `name` is without the colon. */
export class Keyword {
  constructor(readonly name: string) {}
  get text(): string {
    return `:${this.name}`;
  }
  toString(): string {
    return this.text;
  }
  toJSON(): string {
    return this.text;
  }
}

/** An EDN symbol (`foo`, `clojure.core$fn__1`). */
export class EdnSymbol {
  constructor(readonly name: string) {}
  get text(): string {
    // A symbol named like a JSON literal would read as one; spelled as the tag Clojure prints it with.
    return this.name === 'null' || this.name === 'true' || this.name === 'false'
      ? `#symbol ${JSON.stringify(this.name)}`
      : this.name;
  }
  toJSON(): string {
    return this.text;
  }
}

const CHARACTER_NAMES: Readonly<Record<string, string>> = Object.assign(Object.create(null), {
  '\n': 'newline',
  ' ': 'space',
  '\t': 'tab',
  '\r': 'return',
  '\f': 'formfeed',
  '\b': 'backspace',
});

/** An EDN character (`\a`, `\newline`, `\u00e9`): one UTF-16 unit. */
export class EdnChar {
  constructor(readonly char: string) {}
  get text(): string {
    const named = CHARACTER_NAMES[this.char];
    if (named !== undefined) return `\\${named}`;
    const c = this.char.charCodeAt(0);
    // Controls, delimiters and anything past ASCII as \uXXXX, so the text is one token whatever the character.
    if (c <= 32 || c >= 127 || '()[]{}",;\\'.includes(this.char))
      return `\\u${c.toString(16).padStart(4, '0')}`;
    return `\\${this.char}`;
  }
  toJSON(): string {
    return this.text;
  }
}

/** An EDN floating-point number (`1.0`, `5e3`, `##Inf`): never `=` to an integer or a ratio of the same value. */
export class EdnFloat {
  constructor(readonly value: number) {}
  get text(): string {
    const v = this.value;
    if (Number.isNaN(v)) return '##NaN';
    if (!Number.isFinite(v)) return v > 0 ? '##Inf' : '##-Inf';
    // -0.0 = 0.0 in Clojure; a float always shows a point or an exponent.
    if (v === 0) return '0.0';
    const s = String(v);
    return /[.e]/.test(s) ? s : `${s}.0`;
  }
  toJSON(): string {
    return this.text;
  }
}

function gcd(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a;
  let y = b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}

/** An EDN ratio in lowest terms, denominator above 1 (a ratio that reduces to an integer reads as one). */
export class Ratio {
  readonly numerator: bigint;
  readonly denominator: bigint;
  constructor(numerator: bigint, denominator: bigint) {
    const d = gcd(numerator, denominator);
    this.numerator = numerator / d;
    this.denominator = denominator / d;
  }
  get text(): string {
    return `${this.numerator}/${this.denominator}`;
  }
  toJSON(): string {
    return this.text;
  }
}

/**
 * An EDN decimal (`1.50M`): `=` compares decimals by value (`1.5M` = `1.50M`), never to an integer or
 * a float. Kept as its digits without trailing zeros and a power of ten.
 */
export class EdnDecimal {
  readonly digits: bigint;
  readonly exponent: number;
  constructor(token: string) {
    const m = /^([+-]?)(\d+)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(token);
    if (m === null) throw new RangeError(`not a decimal: ${token}`);
    const fraction = m[3] ?? '';
    const all = `${m[2]}${fraction}`;
    // Trailing zeros go as text, in one pass: dividing a bigint by 10 per zero is quadratic in the digits.
    const significant = all.replace(/0+$/, '');
    const digits = BigInt(significant === '' ? '0' : significant) * (m[1] === '-' ? -1n : 1n);
    this.digits = digits;
    this.exponent =
      digits === 0n ? 0 : Number(m[4] ?? '0') - fraction.length + (all.length - significant.length);
  }
  get text(): string {
    if (this.exponent === 0) return `${this.digits}M`;
    if (this.exponent > 0 && this.exponent <= 20) return `${this.digits}${'0'.repeat(this.exponent)}M`;
    const negative = this.digits < 0n;
    const abs = (negative ? -this.digits : this.digits).toString();
    if (this.exponent < 0 && -this.exponent <= 40) {
      const padded = abs.padStart(-this.exponent + 1, '0');
      const point = padded.length + this.exponent;
      return `${negative ? '-' : ''}${padded.slice(0, point)}.${padded.slice(point)}M`;
    }
    return `${this.digits}E${this.exponent}M`;
  }
  toJSON(): string {
    return this.text;
  }
}

/**
 * A tagged literal: `#inst "…"`, `#uuid "…"`, `#object[…]`, a record `#jepsen.foo.Bar{…}`: the tag
 * (without `#`) and the value it tags. Never `=` to the untagged value (a uuid is not its string).
 */
export class Tagged<V = unknown> {
  constructor(
    readonly tag: string,
    readonly value: V,
  ) {}
  toJSON(): string {
    return showValue(this);
  }
}

/** An EDN set; `items` in a fixed order (sorted by their EDN text), since a set has none. */
export class EdnSet<V = unknown> {
  constructor(readonly items: readonly V[]) {}
  toJSON(): string {
    return showValue(this);
  }
}

/** An EDN map read from a history, keys of any type (`{:a 1}` is not `{"a" 1}`), entries as written. */
export class EdnMap {
  constructor(readonly entries: readonly (readonly [unknown, unknown])[]) {}
  /** The value of keyword key `:name`, if there is one. */
  get(name: string): unknown {
    for (const [k, v] of this.entries) if (k instanceof Keyword && k.name === name) return v;
    return undefined;
  }
  toJSON(): string {
    return showValue(this);
  }
}

/** A value with no JSON type: a keyword, symbol, character, float, ratio or decimal. */
export type EdnAtom = Keyword | EdnSymbol | EdnChar | EdnFloat | Ratio | EdnDecimal;

export function isEdnAtom(value: unknown): value is EdnAtom {
  return (
    value instanceof Keyword ||
    value instanceof EdnSymbol ||
    value instanceof EdnChar ||
    value instanceof EdnFloat ||
    value instanceof Ratio ||
    value instanceof EdnDecimal
  );
}

/**
 * A value of these types written as EDN, its elements by `inner`; undefined for any other value.
 * With a sorting `inner`-caller (canonical text) maps and sets come out in one order whatever the
 * order read, so equal values (as Clojure's `=` says) write alike.
 */
export function ednTypeText(
  value: unknown,
  inner: (v: unknown) => string,
  sorted: boolean,
): string | undefined {
  if (isEdnAtom(value)) return value.text;
  if (value instanceof Tagged) {
    if (value.tag === 'uuid' && typeof value.value === 'string')
      return `#uuid ${JSON.stringify(value.value.toLowerCase())}`;
    return `#${value.tag} ${inner(value.value)}`;
  }
  if (value instanceof EdnSet) {
    const items = value.items.map(inner);
    if (sorted) items.sort();
    return `#{${items.join(' ')}}`;
  }
  if (value instanceof EdnMap) {
    const entries = value.entries.map(([k, v]) => `${inner(k)} ${inner(v)}`);
    if (sorted) entries.sort();
    return `{${entries.join(', ')}}`;
  }
  return undefined;
}
