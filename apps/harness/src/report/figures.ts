import { abridge } from './abridge.js';
import { esc } from './html.js';

/** Flattens nested figures into `a.b: value` pairs; a '' key (the single resource) adds nothing to the path. */
function pairs(value: unknown, path: string, out: [string, string][]): void {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0 && path) out.push([path, '—']);
    for (const [key, inner] of entries) pairs(inner, key === '' ? path : path ? `${path}.${key}` : key, out);
    return;
  }
  const text = Array.isArray(value)
    ? value.map((v) => (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v))).join(', ')
    : String(value);
  out.push([path || 'value', text]);
}

/**
 * A checker's figures (or a fault's target and evidence) as readable `key: value` pairs that wrap
 * with the column instead of one long line of JSON; cut to the page's limits (`abridge`).
 */
export function figuresHtml(value: unknown): string {
  const out: [string, string][] = [];
  pairs(abridge(value), '', out);
  if (out.length === 0) return '<span class="muted">—</span>';
  return `<span class="figures">${out
    .map(([k, v]) => `<span class="kv"><span class="k">${esc(k)}</span>: ${esc(v)}</span>`)
    .join(' ')}</span>`;
}
