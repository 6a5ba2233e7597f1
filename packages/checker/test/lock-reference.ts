import type { HistoryEvent } from '../src/history/types.js';

/**
 * Deliberately simple lock checkers, written from the README's "Lock checkers: exact semantics" and
 * nothing else: every event compared with every other (quadratic), no sweeps, no sorting tricks, no
 * shared code with src/lock. The property tests run both over random histories and demand the same
 * verdicts, violations and counts. Each returns plain strings and numbers, easy to compare.
 */

type Value = Record<string, unknown>;
type Line = HistoryEvent & { value: Value };

interface Judged {
  verdict: 'ok' | 'illegal' | 'unknown';
  /** One string per violation, sorted. */
  violations: string[];
  counts: Record<string, number>;
}

/** Is `a` before `b` in the resource's order (time, then index)? */
function before(a: HistoryEvent, b: HistoryEvent): boolean {
  return a.time < b.time || (a.time === b.time && a.index < b.index);
}

/** The resource's lines of the given kinds, in the resource's order (a plain insertion sort). */
function resourceLines(history: readonly HistoryEvent[], kinds: readonly string[]): Line[] {
  const out: Line[] = [];
  for (const e of history) {
    if (e.process !== 'resource' || !kinds.includes(e.f)) continue;
    let at = out.length;
    while (at > 0 && before(e, out[at - 1] as Line)) at--;
    out.splice(at, 0, e as Line);
  }
  return out;
}

const keyOf = (e: HistoryEvent): string => e.key ?? '';
const integer = (raw: unknown): bigint | undefined =>
  raw === undefined || raw === null ? undefined : BigInt(raw as string | number);

// ---------------------------------------------------------------- mutex

export function referenceMutex(history: readonly HistoryEvent[]): Judged {
  const lines = resourceLines(history, ['enter', 'leave']);
  // Leaves alone judge nothing.
  if (!lines.some((e) => e.f === 'enter')) return { verdict: 'unknown', violations: [], counts: {} };
  type Section = { key: string; client: unknown; start: Line; end: Line | undefined };
  const sections: Section[] = [];
  const counts = { sections: 0, refused: 0, reentries: 0, unmatchedLeaves: 0, open: 0 };
  for (const e of lines) {
    const mine = sections.find(
      (s) => s.key === keyOf(e) && s.client === e.value.client && s.end === undefined,
    );
    if (e.f === 'leave') {
      if (mine === undefined) counts.unmatchedLeaves++;
      else mine.end = e;
    } else if (e.value.accepted !== true) counts.refused++;
    else if (mine !== undefined) counts.reentries++;
    else sections.push({ key: keyOf(e), client: e.value.client, start: e, end: undefined });
  }
  counts.sections = sections.length;
  counts.open = sections.filter((s) => s.end === undefined).length;
  // Section a is inside at event x when a.start ≤ x < a.end: they overlap when each starts first.
  const startsBeforeEnd = (a: Section, b: Section) => b.end === undefined || before(a.start, b.end);
  const violations: string[] = [];
  for (let i = 0; i < sections.length; i++) {
    for (let j = i + 1; j < sections.length; j++) {
      const [a, b] = [sections[i] as Section, sections[j] as Section];
      if (a.key !== b.key || !startsBeforeEnd(a, b) || !startsBeforeEnd(b, a)) continue;
      const from = Math.max(a.start.time, b.start.time);
      const to = Math.min(a.end?.time ?? Infinity, b.end?.time ?? Infinity);
      violations.push(`overlap ${a.key} ${pairOf(a.client, b.client)} ${from} ${to}`);
    }
  }
  return judged(violations, counts);
}

// ---------------------------------------------------------------- fences

export function referenceFences(history: readonly HistoryEvent[]): Judged {
  const lines = resourceLines(history, ['enter', 'write', 'claim', 'run']);
  const fenced = lines.filter((e) => integer(e.value.fence) !== undefined);
  const counts = { accepted: 0, staleRefused: 0, freshRefused: 0, unfenced: lines.length - fenced.length };
  const violations: string[] = [];
  for (const e of fenced) {
    const fence = integer(e.value.fence) as bigint;
    const earlier = fenced.filter((p) => keyOf(p) === keyOf(e) && before(p, e) && p.value.accepted !== false);
    let highest: Line | undefined;
    for (const p of earlier) {
      if (
        highest === undefined ||
        (integer(p.value.fence) as bigint) > (integer(highest.value.fence) as bigint)
      ) {
        highest = p;
      }
    }
    const top = highest === undefined ? undefined : (integer(highest.value.fence) as bigint);
    const fresh =
      top === undefined || fence > top || (fence === top && highest?.value.client === e.value.client);
    if (e.value.accepted === false) {
      if (fresh) counts.freshRefused++;
      else counts.staleRefused++;
      continue;
    }
    counts.accepted++;
    if (!fresh) violations.push(`${fence < (top as bigint) ? 'stale-accepted' : 'shared-fence'} ${e.index}`);
  }
  const reissue = referenceReissued(history);
  violations.push(...reissue.violations);
  const all = { ...counts, grants: reissue.grants };
  if (fenced.length === 0 && reissue.violations.length === 0)
    return { verdict: 'unknown', violations: [], counts: all };
  return judged(violations, all);
}

/** A grant's fence as an integer: a decimal string or a safe integer; anything else is no fence. */
function grantFence(raw: unknown): bigint | undefined {
  if (typeof raw === 'string' && /^-?\d+$/.test(raw)) return BigInt(raw);
  if (typeof raw === 'number' && Number.isSafeInteger(raw)) return BigInt(raw);
  return undefined;
}

/**
 * `reissued`: per resource (the grant's `value.resource`, else its `key`), a fence handed to two different grants
 * (an `ok` of a client process with `grant` and `fence`); the violation sits at the first record of the second
 * grant in history order.
 */
function referenceReissued(history: readonly HistoryEvent[]): { grants: number; violations: string[] } {
  const grants = history.filter((e) => {
    if (e.type !== 'ok' || e.process === 'resource' || e.process === 'nemesis') return false;
    const v = e.value as Value | null;
    if (typeof v !== 'object' || v === null) return false;
    return grantFence(v.fence) !== undefined && (typeof v.grant === 'string' || typeof v.grant === 'number');
  }) as Line[];
  const resourceOf = (e: Line) => (typeof e.value.resource === 'string' ? e.value.resource : keyOf(e));
  const violations: string[] = [];
  const done = new Set<string>();
  for (const e of grants) {
    const id = `${resourceOf(e)} ${grantFence(e.value.fence)}`;
    if (done.has(id)) continue;
    done.add(id);
    const same = grants
      .filter((p) => `${resourceOf(p)} ${grantFence(p.value.fence)}` === id)
      .sort((a, b) => a.index - b.index);
    const first = same[0] as Line;
    const second = same.find((p) => String(p.value.grant) !== String(first.value.grant));
    if (second !== undefined) violations.push(`reissued ${second.index}`);
  }
  return { grants: grants.length, violations };
}

// ---------------------------------------------------------------- election

export function referenceElection(history: readonly HistoryEvent[]): Judged {
  const lines = resourceLines(history, ['claim']);
  if (lines.length === 0) return { verdict: 'unknown', violations: [], counts: {} };
  const accepted = lines.filter((e) => e.value.accepted === true);
  const counts = {
    claims: accepted.length,
    refused: lines.length - accepted.length,
    staleRefused: 0,
    reigns: 0,
  };
  const violations: string[] = [];
  const highestBefore = (e: Line) =>
    accepted
      .filter((p) => keyOf(p) === keyOf(e) && before(p, e))
      .reduce<bigint | undefined>((m, p) => {
        const t = integer(p.value.term) as bigint;
        return m === undefined || t > m ? t : m;
      }, undefined);
  for (const e of lines) {
    const top = highestBefore(e);
    const term = integer(e.value.term) as bigint;
    if (top === undefined || term >= top) continue;
    if (e.value.accepted === true) violations.push(`deposed-claim ${e.index} ${term} ${top}`);
    else counts.staleRefused++;
  }
  type Reign = { key: string; client: unknown; term: bigint; first: Line; last: Line };
  const reigns: Reign[] = [];
  for (const e of accepted) {
    const term = integer(e.value.term) as bigint;
    const reign = reigns.find((r) => r.key === keyOf(e) && r.client === e.value.client && r.term === term);
    if (reign === undefined) reigns.push({ key: keyOf(e), client: e.value.client, term, first: e, last: e });
    else reign.last = e;
  }
  counts.reigns = reigns.length;
  for (let i = 0; i < reigns.length; i++) {
    for (let j = i + 1; j < reigns.length; j++) {
      const [a, b] = [reigns[i] as Reign, reigns[j] as Reign];
      if (a.key !== b.key || a.client === b.client) continue;
      const overlap = !before(a.last, b.first) && !before(b.last, a.first);
      if (overlap) {
        const from = Math.max(a.first.time, b.first.time);
        const to = Math.min(a.last.time, b.last.time);
        violations.push(`two-leaders ${a.key} ${pairOf(a.client, b.client)} ${from} ${to}`);
      } else if (a.term === b.term) {
        const from = Math.min(a.first.time, b.first.time);
        const to = Math.max(a.last.time, b.last.time);
        violations.push(`two-leaders ${a.key} ${pairOf(a.client, b.client)} ${from} ${to}`);
      }
    }
  }
  return judged(violations, counts);
}

// ---------------------------------------------------------------- cron

export function referenceCron(history: readonly HistoryEvent[]): Judged {
  const lines = resourceLines(history, ['run']);
  if (lines.length === 0) return { verdict: 'unknown', violations: [], counts: {} };
  const ran = lines.filter((e) => e.value.accepted !== false);
  const tickOf = (raw: unknown): string => {
    const text = String(raw);
    // Leading zeros do not make another integer; a label (not all digits) is taken as written.
    return /^-?\d+$/.test(text) ? text.replace(/^(-?)0+(?=\d)/, '$1').replace(/^-0$/, '0') : text;
  };
  const id = (e: Line) => JSON.stringify([keyOf(e), e.value.job ?? '', tickOf(e.value.tick)]);
  const ids = [...new Set(ran.map(id))];
  const violations: string[] = [];
  let duplicates = 0;
  for (const tick of ids) {
    const runs = ran.filter((e) => id(e) === tick);
    if (runs.length < 2) continue;
    duplicates += runs.length - 1;
    violations.push(`duplicate-run ${tick} ${runs.map((e) => e.index).join(',')}`);
  }
  return judged(violations, {
    ticks: ids.length,
    runs: ran.length,
    refused: lines.length - ran.length,
    duplicates,
  });
}

// ---------------------------------------------------------------- inventory

export function referenceInventory(history: readonly HistoryEvent[], initialStock?: number): Judged {
  const lines = resourceLines(history, ['init', 'read', 'write']);
  // Buys: per process, invokes and completions in index order.
  const buys = history
    .filter((e) => e.f === 'buy' && e.process !== 'resource')
    .sort((a, b) => a.index - b.index);
  type Sale = { key: string; outcome: string };
  const sales: Sale[] = [];
  for (const invoke of buys.filter((e) => e.type === 'invoke')) {
    const completion = buys.find((e) => e.process === invoke.process && e.index > invoke.index);
    const outcome = completion === undefined || completion.type === 'invoke' ? 'info' : completion.type;
    const named = invoke.key ?? (completion?.type === 'invoke' ? undefined : completion?.key);
    sales.push({ key: named ?? '', outcome });
  }
  // Only writes and buys can break a bound.
  if (!lines.some((e) => e.f === 'write') && sales.length === 0) {
    return { verdict: 'unknown', violations: [], counts: {} };
  }

  const resources = [
    ...new Set([...lines.map(keyOf), ...sales.filter((s) => s.key !== '').map((s) => s.key)]),
  ];
  const unkeyed = sales.filter((s) => s.key === '');
  let pooled = false;
  if (unkeyed.length > 0 && !resources.includes('')) {
    if (resources.length === 1) for (const s of unkeyed) s.key = resources[0] as string;
    else if (resources.length === 0) resources.push('');
    else pooled = true;
  }
  const violations: string[] = [];
  const counts: Record<string, number> = {};
  const totals: { initial: number; final: number; sales: Sale[] }[] = [];
  let unstarted = false;
  for (const key of resources) {
    const init = lines.find((e) => e.f === 'init' && keyOf(e) === key);
    const initial = init === undefined ? initialStock : (init.value.stock as number);
    if (initial === undefined) {
      unstarted = true;
      continue;
    }
    let stock = initial;
    for (const e of lines) {
      if (keyOf(e) !== key || e.f !== 'write' || e.value.accepted !== true) continue;
      const wrote = e.value.stock as number;
      if (wrote !== stock - 1) violations.push(`lost-update ${key} ${e.index}`);
      if (wrote < 0) violations.push(`oversell ${key} ${e.index}`);
      stock = wrote;
    }
    counts[`${key}.final`] = stock;
    const mine = sales.filter((s) => s.key === key);
    counts[`${key}.sales`] = mine.length;
    totals.push({ initial, final: stock, sales: mine });
    if (!pooled) violations.push(...boundViolations(key, initial, stock, mine));
  }
  if (pooled && !unstarted) {
    const all = totals.flatMap((t) => t.sales).concat(unkeyed);
    const initial = totals.reduce((n, t) => n + t.initial, 0);
    const final = totals.reduce((n, t) => n + t.final, 0);
    violations.push(...boundViolations('', initial, final, all));
    counts['.final'] = final;
    counts['.sales'] = all.length;
  }
  if (violations.length === 0 && unstarted) return { verdict: 'unknown', violations: [], counts };
  return judged(violations, counts);
}

function boundViolations(key: string, initial: number, final: number, sales: readonly Sale[]): string[] {
  if (sales.length === 0) return [];
  const acknowledged = sales.filter((s) => s.outcome === 'ok').length;
  const inDoubt = sales.filter((s) => s.outcome !== 'ok' && s.outcome !== 'fail').length;
  const gone = initial - final;
  const found: string[] = [];
  if (gone < acknowledged) found.push(`lost-update ${key} total`);
  if (gone > acknowledged + inDoubt) found.push(`phantom-sale ${key} total`);
  if (acknowledged > initial) found.push(`oversell ${key} total`);
  return found;
}

type Sale = { key: string; outcome: string };

// ---------------------------------------------------------------- helpers

function pairOf(a: unknown, b: unknown): string {
  return [String(a), String(b)].sort().join('-');
}

function judged(violations: string[], counts: Record<string, number>): Judged {
  return { verdict: violations.length > 0 ? 'illegal' : 'ok', violations: violations.sort(), counts };
}
