/** Styles of the report page: inline, so the file opens anywhere with no network. */
export const PAGE_CSS = `
:root { --ok: #1a7f37; --illegal: #cf222e; --unknown: #9a6700; --ink: #1f2328; --muted: #656d76; --rule: #d0d7de; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, sans-serif; color: var(--ink); margin: 0; padding: 16px 24px 48px; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; } h3 { font-size: 15px; margin: 18px 0 6px; }
h4 { font-size: 13px; margin: 10px 0 4px; }
.meta { color: var(--muted); margin: 0; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; color: #fff; font-weight: 600; font-size: 12px; text-transform: uppercase; }
.badge[data-verdict="ok"] { background: var(--ok); } .badge[data-verdict="illegal"] { background: var(--illegal); }
.badge[data-verdict="unknown"] { background: var(--unknown); }
.error { color: var(--illegal); font-family: ui-monospace, monospace; white-space: pre-wrap; }
dl.stats { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 6px 0; }
dl.stats dt { color: var(--muted); } dl.stats dd { margin: 0; font-family: ui-monospace, monospace; }
table.violations { border-collapse: collapse; margin: 6px 0; font-size: 13px; }
table.violations td, table.violations th { border: 1px solid var(--rule); padding: 3px 8px; text-align: left; vertical-align: top; }
table.violations tr.violation { cursor: pointer; } table.violations tr.hl { background: #ffebe9; }
code { font-family: ui-monospace, monospace; font-size: 12px; }
.scroll { overflow-x: auto; border: 1px solid var(--rule); border-radius: 6px; padding: 4px; }
svg.timeline { display: block; font: 11px system-ui, sans-serif; }
.lane-label { fill: var(--muted); } .lane-rule, .tick { stroke: #eef0f2; } .tick-label { fill: var(--muted); font-size: 10px; }
.hold { fill: #54aeff; fill-opacity: .55; stroke: #0969da; } .hold.open { fill: url(#hatch); fill-opacity: 1; }
.mark { fill: #0969da; } .mark.refused { fill: #fff; stroke: #656d76; } .mark.claim { fill: #8250df; } .mark.run { fill: #bf8700; }
.overlap { fill: var(--illegal); fill-opacity: .25; stroke: var(--illegal); stroke-width: 1.5; }
.violation-mark { fill: none; stroke: var(--illegal); stroke-width: 2.5; }
.fault { stroke: #bc4c00; stroke-width: 2; }
.op rect { fill: #ddf4ff; stroke: #54aeff; } .op.linearized rect { fill: #dafbe1; stroke: #4ac26b; }
.op.open rect { stroke-dasharray: 4 2; } .op.unplaced rect { fill: #ffebe9; stroke: var(--illegal); stroke-width: 2.5; }
.op.hl rect, .overlap.hl, .violation-mark.hl { stroke: #000; stroke-width: 3; }
.op-label { fill: var(--ink); font-size: 10px; pointer-events: none; }
.linearization-path polyline { fill: none; stroke: #1a7f37; stroke-width: 1; stroke-opacity: .6; }
.linearization-path .point { fill: #1a7f37; }
ol.linearization, ul.unplaced-list { columns: 3; font-size: 12px; margin: 4px 0; }
ul.unplaced-list li { color: var(--illegal); } li.hl { background: #fff8c5; }
.note { color: var(--muted); font-style: italic; }
.controls { margin: 8px 0; color: var(--muted); }
`;

/**
 * Behaviour of the report page, deliberately small: hovering an operation in a list highlights its box,
 * clicking a violation highlights its marks, and a zoom control widens the timelines.
 */
export const PAGE_JS = `
(function () {
  'use strict';
  function within(el) { return el.closest('section') || document; }
  document.querySelectorAll('li[data-op]').forEach(function (li) {
    function toggle(on) {
      within(li).querySelectorAll('[data-op="' + li.dataset.op + '"]').forEach(function (el) { el.classList.toggle('hl', on); });
    }
    li.addEventListener('mouseenter', function () { toggle(true); });
    li.addEventListener('mouseleave', function () { toggle(false); });
  });
  document.querySelectorAll('tr.violation').forEach(function (row) {
    row.addEventListener('click', function () {
      var on = !row.classList.contains('hl');
      row.classList.toggle('hl', on);
      document.querySelectorAll('[data-violation="' + row.dataset.violation + '"][data-check="' + row.dataset.check + '"]')
        .forEach(function (el) { el.classList.toggle('hl', on); });
    });
  });
  var zoom = document.getElementById('zoom');
  if (zoom) zoom.addEventListener('input', function () {
    document.querySelectorAll('svg.timeline').forEach(function (svg) {
      var base = Number(svg.getAttribute('data-width') || svg.getAttribute('width'));
      svg.setAttribute('data-width', String(base));
      svg.setAttribute('width', String(base * Number(zoom.value)));
    });
  });
})();
`;

/** The SVG pattern for intervals whose end is unknown. */
export const SVG_DEFS = `<svg width="0" height="0" style="position:absolute" aria-hidden="true"><defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#b6e3ff"/><line x1="0" y1="0" x2="0" y2="6" stroke="#0969da" stroke-width="2"/></pattern></defs></svg>`;
