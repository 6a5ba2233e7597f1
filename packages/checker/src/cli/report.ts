import { showValue } from '../history/show.js';
import type { Verdict } from '../history/types.js';
import type { LinearizabilityResult } from '../linearizability/index.js';
import { RESOURCE_PROCESS } from '../lock/events.js';
import type { AppliedSemantics } from '../models/semantics.js';
import type { CheckResult } from '../verdict.js';
import type { CliOptions } from './arguments.js';
import type { Outcome } from './run.js';
import { escapeLine } from './terminal.js';

/** Keys listed with their verdict in the human summary. */
const KEYS_SHOWN = 20;

// One collator for every comparison: localeCompare with options builds one per call (seconds for 100 000 keys).
const KEY_ORDER = new Intl.Collator('en', { numeric: true });

/** One line saying how the ops were read: semantics, nil reads, initial value, keys, ops left out. */
export function describeSemantics(s: AppliedSemantics): string {
  const parts = [s.name === 'knossos' ? 'knossos semantics' : 'strict semantics'];
  if (s.nilReads === 'unknown')
    parts.push(`ok reads of nil are reads of an unknown value (${s.nilReadsUnknown} left out)`);
  else if (s.nilReads === 'value') parts.push('a read of nil read nil');
  if ('initialValue' in s)
    parts.push(`initial value ${s.initialValue === null ? 'nil' : showValue(s.initialValue)}`);
  parts.push(
    s.independent.applied
      ? `jepsen.independent tuples split into ${s.independent.keys} keys`
      : `not split by key (${s.independent.mode}${s.independent.why === undefined ? '' : `: ${s.independent.why}`})`,
  );
  if (s.ignored.ops > 0) {
    const byF = Object.entries(s.ignored.byF)
      .map(([f, n]) => `${f} ${n}`)
      .join(', ');
    parts.push(`${s.ignored.ops} ops the model has no operation for left out (${byF})`);
  }
  return parts.join('; ');
}

/** Violations printed per check with `--json`; the HTML page and the API keep more. */
const JSON_VIOLATIONS = 100;

/**
 * The human summary: overall verdict, then per check its verdict, figures and first violations. Each
 * line is escaped on its own, so a key or message can neither inject terminal sequences nor forge a line.
 */
export function summary(file: string, outcome: Outcome): string {
  const lines = [`${file}: ${outcome.composite.verdict}`];
  if (outcome.semantics !== undefined) lines.push(`  read as: ${describeSemantics(outcome.semantics)}`);
  for (const [name, r] of Object.entries(outcome.composite.results)) {
    const counted = outcome.notCounted.includes(name)
      ? '; not counted: --checker all judges what applies'
      : '';
    lines.push(`  ${name}: ${r.verdict}${r.error === undefined ? '' : ` (${r.error}${counted})`}`);
    const partitions = (r as Partial<LinearizabilityResult>).partitions;
    if (partitions !== undefined && partitions.length > 1) {
      const count = (v: Verdict) => partitions.filter((p) => p.verdict === v).length;
      lines.push(
        `    ${partitions.length} partitions: ${count('ok')} ok, ${count('illegal')} illegal, ${count('unknown')} unknown`,
      );
      // A verdict per key, the worst first (illegal, unknown, ok), each group by key (numbers by value).
      const rank = { illegal: 0, unknown: 1, ok: 2 } as const;
      const sorted = [...partitions].sort(
        (a, b) => rank[a.verdict] - rank[b.verdict] || KEY_ORDER.compare(a.key ?? '', b.key ?? ''),
      );
      for (const p of sorted.slice(0, KEYS_SHOWN)) {
        const why =
          p.verdict === 'illegal'
            ? (p.witness?.conviction ?? p.witness?.unplaced[0]?.reason)
            : p.verdict === 'unknown'
              ? p.reason
              : undefined;
        lines.push(`    key ${p.key ?? ''}: ${p.verdict}${why === undefined ? '' : ` (${why})`}`);
      }
      if (sorted.length > KEYS_SHOWN)
        lines.push(`    … ${sorted.length - KEYS_SHOWN} more keys (--json for all)`);
    }
    const figures = flatFigures(r.stats);
    if (figures !== '') lines.push(`    ${figures}`);
    for (const v of r.violations.slice(0, 5)) lines.push(`    - ${describeViolation(v)}`);
    if (r.violations.length > 5)
      lines.push(`    … ${r.violations.length - 5} more (--json or --html for all)`);
  }
  return `${lines.map(escapeLine).join('\n')}\n`;
}

/** `sections 120, overlaps 0, …`: the numeric stats of a check, for the human summary. */
function flatFigures(stats: unknown): string {
  if (typeof stats !== 'object' || stats === null) return '';
  return Object.entries(stats)
    .filter((entry): entry is [string, number] => typeof entry[1] === 'number')
    .map(([k, v]) => `${k} ${Number.isInteger(v) ? v : v.toFixed(2)}`)
    .join(', ');
}

function describeViolation(v: unknown): string {
  const o = v as Record<string, unknown>;
  if (typeof o.message === 'string')
    return `${String(o.kind)}${o.key ? ` [${String(o.key)}]` : ''}: ${o.message}`;
  return JSON.stringify(v, jsonValue);
}

export function toJson(file: string, options: CliOptions, outcome: Outcome): unknown {
  const checks: Record<string, unknown> = {};
  for (const [name, r] of Object.entries(outcome.composite.results)) {
    const lin = r as Partial<LinearizabilityResult>;
    checks[name] = {
      verdict: r.verdict,
      ...(r.error === undefined ? {} : { error: r.error }),
      ...(outcome.notCounted.includes(name) ? { counted: false } : {}),
      stats: r.stats,
      ...(lin.partitions === undefined
        ? {
            resources: perResource(r, outcome.drawn),
            violations: r.violations.slice(0, JSON_VIOLATIONS),
            violationCount: r.violations.length,
          }
        : {
            partitions: lin.partitions.map((p) => ({
              key: p.key ?? null,
              verdict: p.verdict,
              ...(p.reason === undefined ? {} : { reason: p.reason }),
              ops: p.opIds.length,
              steps: p.steps,
              ms: Math.round(p.ms * 100) / 100,
              ...(p.witness === undefined
                ? {}
                : {
                    prefix: p.witness.prefix.length,
                    unplaced: p.witness.unplaced.map((u) => ({
                      id: u.id,
                      op: u.description,
                      reason: u.reason,
                    })),
                    ...(p.witness.conviction === undefined ? {} : { conviction: p.witness.conviction }),
                  }),
            })),
          }),
    };
  }
  return {
    file,
    format: outcome.format,
    model: options.model ?? null,
    ...(outcome.semantics === undefined ? {} : { semantics: outcome.semantics }),
    verdict: outcome.composite.verdict,
    checks,
  };
}

/**
 * A lock check's verdict per protected resource (the `key` of the resource's lines; "" when there is
 * one): illegal where a violation names it, otherwise the check's own verdict.
 */
function perResource(r: CheckResult, history: Outcome['drawn']): Record<string, Verdict> {
  const verdicts: Record<string, Verdict> = {};
  for (const e of history as readonly { process?: unknown; key?: string }[]) {
    if (e.process === RESOURCE_PROCESS) verdicts[e.key ?? ''] = r.verdict === 'illegal' ? 'ok' : r.verdict;
  }
  for (const v of r.violations) {
    const key = (v as { key?: unknown }).key;
    verdicts[typeof key === 'string' ? key : ''] = 'illegal';
  }
  return verdicts;
}

/** JSON has no Infinity (an open interval's end) nor bigint: write them as strings. */
export function jsonValue(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value === Number.POSITIVE_INFINITY) return 'Infinity';
  return value;
}
