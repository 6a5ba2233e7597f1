import { escapeHtml } from '@fencekit/checker';
import { pageHead } from './ownership.js';

/** Escapes text for HTML element content and attribute values: the checker's, the repo's one escaper. */
export const esc = escapeHtml;

const STYLE = `
:root { --ok:#1a7f37; --illegal:#cf222e; --unknown:#9a6700; --ink:#1f2328; --muted:#656d76; --line:#d0d7de; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); margin: 0; padding: 24px 32px; }
h1 { font-size: 22px; margin: 0 0 8px; } h2 { font-size: 17px; margin: 28px 0 8px; }
a { color: #0969da; } code, pre { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
pre { background: #f6f8fa; padding: 8px; overflow: auto; max-height: 320px; }
table { border-collapse: collapse; margin: 4px 0 12px; } th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
.verdict { display: inline-block; padding: 2px 10px; border-radius: 12px; color: #fff; font-weight: 600; }
.verdict.ok { background: var(--ok); } .verdict.illegal { background: var(--illegal); } .verdict.unknown { background: var(--unknown); }
.banner { font-size: 20px; padding: 12px 16px; border-radius: 8px; color: #fff; margin: 8px 0 16px; }
.banner.ok { background: var(--ok); } .banner.illegal { background: var(--illegal); } .banner.unknown { background: var(--unknown); }
.muted { color: var(--muted); } .legend span { margin-right: 14px; white-space: nowrap; }
.swatch { display: inline-block; width: 12px; height: 12px; vertical-align: -2px; margin-right: 4px; border: 1px solid #0002; }
svg { display: block; max-width: 100%; height: auto; } svg text { font: 11px system-ui, sans-serif; fill: var(--ink); }
td.cell a { display: inline-block; margin: 1px 2px; }
td.figures-cell { max-width: 46em; }
.figures .kv { display: inline-block; margin: 0 12px 2px 0; overflow-wrap: anywhere; }
.figures .k { color: var(--muted); }
`;

/**
 * The checker page's policy without its one allowance (its own inline script): these pages have no
 * script, so none runs, whatever a stored file smuggled past the escaping; no network either.
 */
export const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

/** One self-contained page: inline CSS, inline SVG, no scripts, no network; marked as fencekit's. */
export function page(title: string, body: string): string {
  return `${pageHead(esc(PAGE_CSP))}<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title><style>${STYLE}</style></head>
<body>
${body}
</body></html>
`;
}

export function verdictBadge(verdict: string): string {
  return `<span class="verdict ${esc(verdict)}" data-verdict="${esc(verdict)}">${esc(verdict)}</span>`;
}
