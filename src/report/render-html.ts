import { gateLine } from './gate-line.js';
import type { RebuiltRun } from './rebuilt-run.js';
import { BY_TOOL_COLUMNS, percent } from './report-builder.js';
import type { FailingRun, RateRow, Report } from './report-types.js';
import type { ScorerExpectations } from './scorer-expectations.js';

function esc(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '');
}

interface Bar {
  group: string;
  label: string;
  passed: number;
  total: number;
}

/** A horizontal bar chart of pass rates as inline SVG: one bar per tool, intent and risk. */
function chart(bars: Bar[]): string {
  if (bars.length === 0) return '<p>No grouped results to chart.</p>';
  const rowH = 22;
  const labelW = 260;
  const barW = 360;
  const h = bars.length * rowH + 10;
  const rows = bars
    .map((b, i) => {
      const rate = b.total === 0 ? 0 : b.passed / b.total;
      const y = 5 + i * rowH;
      const w = Math.round(rate * barW);
      const color = rate >= 0.9 ? '#2e7d32' : rate >= 0.5 ? '#f9a825' : '#c62828';
      return `<g class="bar-row" data-group="${esc(b.group)}"><text x="${labelW - 6}" y="${y + 15}" text-anchor="end">${esc(`${b.group}: ${b.label}`)}</text><rect x="${labelW}" y="${y + 3}" width="${barW}" height="${rowH - 6}" fill="#eee"/><rect class="bar" x="${labelW}" y="${y + 3}" width="${w}" height="${rowH - 6}" fill="${color}"><title>${esc(`${b.group} ${b.label}: ${b.passed}/${b.total}`)}</title></rect><text x="${labelW + barW + 6}" y="${y + 15}">${percent(b.passed, b.total)} (${b.passed}/${b.total})</text></g>`;
    })
    .join('');
  return `<svg id="chart" role="img" aria-label="pass rates by tool, intent and risk" width="${labelW + barW + 140}" height="${h}" font-size="12" font-family="system-ui,sans-serif">${rows}</svg>`;
}

function table(
  id: string,
  head: string[],
  rows: string[][],
  numeric: ReadonlySet<number> = new Set(),
): string {
  const th = head.map((h, i) => `<th${numeric.has(i) ? ' class="num"' : ''}>${esc(h)}</th>`).join('');
  const body = rows
    .map(
      (r) => `<tr>${r.map((c, i) => `<td${numeric.has(i) ? ' class="num"' : ''}>${c}</td>`).join('')}</tr>`,
    )
    .join('\n');
  return `<table id="${id}" class="sortable"><thead><tr>${th}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

function rateSection(id: string, title: string, rows: RateRow[], unit: string): string {
  if (rows.length === 0) return '';
  return `<h2>By ${esc(title)}</h2>${table(
    id,
    [title, unit, 'passed', 'pass rate'],
    rows.map((r) => [esc(r.key), String(r.total), String(r.passed), percent(r.passed, r.total)]),
    new Set([1, 2, 3]),
  )}`;
}

/**
 * Under a failing run's reasons, a `<details>` that opens to what toolwatch rebuilt: every
 * scorer of the run with each expectation marked met or unmet (so a reader sees what held, not
 * only what failed), the run's tool calls in order (status, arguments as the policy's
 * redaction allows, errors) and its nested member runs.
 */
function drillDown(f: FailingRun): string {
  const scorers = f.expectations ?? [];
  if (scorers.length === 0 && !f.rebuilt) return '';
  const parts: string[] = [];
  if (scorers.length > 0)
    parts.push(
      `<div class="expectations"><strong>Expectations</strong><ul>${scorers.map(scorerItem).join('')}</ul></div>`,
    );
  if (f.rebuilt) parts.push(rebuiltRun(f.rebuilt));
  return `<details class="rebuilt"><summary>What toolwatch rebuilt</summary>${parts.join('')}</details>`;
}

/** How a scorer's result reads beside its name. */
const SCORER_MARK: Record<ScorerExpectations['label'], string> = {
  pass: 'met',
  fail: 'unmet',
  error: 'error',
  skipped: 'not judged',
};

function scorerItem(s: ScorerExpectations): string {
  const head = `<code>${esc(s.scorer)}</code> <span class="mark">${SCORER_MARK[s.label]}</span>${s.skipped ? `: ${esc(s.skipped)}` : ''}`;
  const lines = s.expectations
    .map(
      (e) =>
        `<li class="${e.met ? 'met' : 'unmet'}"><span class="mark">${e.met ? 'met' : 'unmet'}</span> ${esc(e.text)}</li>`,
    )
    .join('');
  return `<li class="scorer-${esc(s.label)}">${head}${lines ? `<ul>${lines}</ul>` : ''}</li>`;
}

function rebuiltRun(run: RebuiltRun): string {
  const calls =
    run.calls.length === 0
      ? '<p class="no-calls">no tool calls</p>'
      : `<ol class="calls">${run.calls
          .map(
            (c) =>
              `<li class="call"><code class="tool">${esc(c.name)}</code> <span class="status status-${esc(c.status)}">${esc(c.status)}${c.requestOnly ? ' (requested, not run)' : ''}</span>${c.args ? ` <code class="args">${esc(c.args)}</code>` : ''}${c.error ? ` <span class="error">${esc(c.error)}</span>` : ''}</li>`,
          )
          .join('')}</ol>${run.callsOmitted > 0 ? `<p>${run.callsOmitted} more calls not listed</p>` : ''}`;
  const members =
    run.members.length === 0 && run.membersOmitted === 0
      ? ''
      : `<div class="members">${run.members
          .map(
            (m) =>
              `<details class="member" open><summary>member run <code>${esc(m.agent)}</code> (${m.calls.length + m.callsOmitted} calls)</summary>${rebuiltRun(m)}</details>`,
          )
          .join(
            '',
          )}${run.membersOmitted > 0 ? `<p>${run.membersOmitted} more member runs not listed</p>` : ''}</div>`;
  return `<div class="run" data-agent="${esc(run.agent)}"><strong>Tool calls of <code>${esc(run.agent)}</code>${run.implicit ? ' (inferred run)' : ''}</strong>${calls}${members}</div>`;
}

// Sorting by clicking a header, filtering failing runs by text (a filter that leaves one run
// opens what was rebuilt of it); `#filter=TEXT` in the URL pre-fills the filter and
// `#sort=TABLE.COLUMN` (`.-COLUMN`: descending) sorts a table.
// Marks <body data-ready> when done, so a headless check can tell the script ran.
const SCRIPT = `
(function(){
  function cell(r,i){var c=r.children[i];return c?c.textContent.trim():'';}
  function key(t){var n=parseFloat(t.replace(/[%,]/g,''));return isNaN(n)?null:n;}
  document.querySelectorAll('table.sortable').forEach(function(t){
    t.querySelectorAll('th').forEach(function(th,i){
      th.addEventListener('click',function(){
        var body=t.tBodies[0],rows=Array.prototype.slice.call(body.rows);
        var dir=th.getAttribute('data-dir')==='asc'?'desc':'asc';
        t.querySelectorAll('th').forEach(function(x){x.removeAttribute('data-dir');});
        th.setAttribute('data-dir',dir);
        rows.sort(function(a,b){var x=cell(a,i),y=cell(b,i),kx=key(x),ky=key(y);
          var c=(kx!==null&&ky!==null)?kx-ky:x.localeCompare(y);return dir==='asc'?c:-c;});
        rows.forEach(function(r){body.appendChild(r);});
      });
    });
  });
  var f=document.getElementById('filter'),t=document.getElementById('failing');
  function apply(){if(!t)return;var q=f.value.toLowerCase(),shown=0,only=null;
    Array.prototype.forEach.call(t.tBodies[0].rows,function(r){var ok=r.textContent.toLowerCase().indexOf(q)!==-1;r.hidden=!ok;if(ok){shown++;only=r;}});
    var n=document.getElementById('shown');if(n)n.textContent=String(shown);
    if(q&&shown===1){var d=only.querySelector('details.rebuilt');if(d)d.open=true;}}
  if(f){f.addEventListener('input',apply);var m=/[#&]filter=([^&]*)/.exec(location.hash);if(m){f.value=decodeURIComponent(m[1]);}apply();}
  var s=/[#&]sort=([\\w-]+)\\.(-?)(\\d+)/.exec(location.hash);
  if(s){var st=document.getElementById(s[1]),h=st&&st.querySelectorAll('th')[+s[3]];if(h){h.click();if(s[2]==='-')h.click();}}
  document.body.setAttribute('data-ready','1');
})();`;

/** One self-contained HTML file: no external resources. */
export function renderHtml(report: Report): string {
  const bars: Bar[] = [
    ...report.byTool
      .filter((t) => t.expected > 0)
      .map((t) => ({ group: 'tool', label: t.tool, passed: t.finalSuccess, total: t.expected })),
    ...report.byIntent.map((r) => ({ group: 'intent', label: r.key, passed: r.passed, total: r.total })),
    ...report.byRisk.map((r) => ({ group: 'risk', label: r.key, passed: r.passed, total: r.total })),
  ];
  const parts: string[] = [];
  parts.push(
    `<p id="summary"><strong>${report.passed} of ${report.runs} runs passed (${percent(report.passed, report.runs)})</strong>${
      report.input ? ` · ${report.input.files} files · ${report.input.unreadable} unreadable records` : ''
    }${report.policyDigest ? ` · policy <code>${esc(report.policyDigest.slice(0, 16))}</code>` : ''}</p>`,
  );
  if (report.gates && report.gates.length > 0) {
    parts.push(
      `<h2>Gates</h2><ul id="gates">${report.gates
        .map((g) => `<li class="gate-${g.status}">${esc(gateLine(g))}</li>`)
        .join('')}</ul>`,
    );
  }
  if (report.grid) {
    const g = report.grid;
    parts.push(
      `<h2>Calibration grid (k = ${g.k})</h2><p>saturated-pass: pass ratio ≥ ${g.thresholds.saturatedPass}; saturated-fail: ≤ ${g.thresholds.saturatedFail}; learning-zone in between. Overall pass rate ${g.passRate === null ? 'n/a' : `${(100 * g.passRate).toFixed(1)}%`}.</p>`,
      table(
        'grid',
        ['case', 'passed / scored', 'ratio', 'errors', 'class'],
        g.rows.map((r) => [
          esc(r.case),
          `${r.passed}/${r.scored}`,
          r.scored === 0 ? 'n/a' : (r.passed / r.scored).toFixed(2),
          String(r.errors),
          `<span class="class-${r.class}">${r.class}</span>`,
        ]),
        new Set([2, 3]),
      ),
    );
  }
  parts.push('<h2>Pass rate by tool (final success), intent and risk</h2>', chart(bars));
  parts.push(rateSection('by-rule', 'rule', report.byRule, 'runs'));
  if (report.byScorer.length > 0) {
    parts.push(
      '<h2>By scorer</h2>',
      table(
        'by-scorer',
        ['rule', 'scorer', 'kind', 'ran', 'passed', 'pass rate', 'errors', 'skipped'],
        report.byScorer.map((s) => [
          esc(s.rule),
          esc(s.scorer),
          esc(s.kind),
          String(s.ran),
          String(s.passed),
          percent(s.passed, s.ran),
          String(s.errors),
          String(s.skipped),
        ]),
        new Set([3, 4, 5, 6, 7]),
      ),
    );
  }
  if (report.byTool.length > 0) {
    parts.push(
      '<h2>By tool</h2>',
      table(
        'by-tool',
        BY_TOOL_COLUMNS,
        report.byTool.map((t) => [
          esc(t.tool),
          String(t.expected),
          percent(t.firstCallCorrect, t.expected),
          percent(t.finalSuccess, t.expected),
          String(t.retries),
          String(t.forbidden),
          String(t.argMismatches),
        ]),
        new Set([1, 2, 3, 4, 5, 6]),
      ),
    );
  }
  parts.push(rateSection('by-intent', 'intent', report.byIntent, 'results'));
  parts.push(rateSection('by-risk', 'risk', report.byRisk, 'results'));
  parts.push(rateSection('by-tag', 'tag', report.byTag, 'runs'));
  const failingTotal = report.failing.length + report.failingOmitted;
  parts.push(
    `<h2>Failing runs (${failingTotal}${report.failingOmitted > 0 ? `, first ${report.failing.length} kept` : ''})</h2>`,
    failingTotal === 0
      ? // As the text and Markdown reports: no judged run is not every run passing.
        report.runs > 0
        ? '<p>Every run passed.</p>'
        : '<p>No run was judged.</p>'
      : `<p><label>Filter <input id="filter" type="search" placeholder="agent, rule, tool, file…"></label> <span id="shown">${report.failing.length}</span> shown</p>${table(
          'failing',
          ['trace', 'agent', 'rule', 'file', 'why'],
          report.failing.map((f) => [
            `<code>${esc(f.trace_id)}</code>`,
            esc(f.agent),
            esc(f.rule),
            esc(f.file ?? ''),
            `${f.reasons.map(esc).join('<br>')}${drillDown(f)}`,
          ]),
        )}`,
  );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(report.title)}</title>
<meta name="viewport" content="width=device-width,initial-scale=1">
<style>body{font-family:system-ui,sans-serif;margin:2rem;color:#222}table{border-collapse:collapse;margin:.5rem 0 1.5rem}td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}th{cursor:pointer;background:#f5f5f5}th[data-dir=asc]::after{content:" ▲"}th[data-dir=desc]::after{content:" ▼"}.num{text-align:right}.gate-failed{color:#c62828;font-weight:bold}.gate-skipped{color:#777}.class-saturated-fail{color:#c62828}.class-saturated-pass{color:#2e7d32}.class-learning-zone{color:#b26a00;font-weight:bold}details.rebuilt{margin-top:.3rem}details summary{cursor:pointer;color:#1a4f8a}ol.calls{margin:.2rem 0;padding-left:1.6rem}.status-error,.status-refused{color:#c62828;font-weight:bold}.status-paused{color:#b26a00}.status-ok{color:#2e7d32}code.args{color:#555}.members{margin-left:1rem;border-left:2px solid #ddd;padding-left:.5rem}.met>.mark,.scorer-pass>.mark{color:#2e7d32}.unmet>.mark,.scorer-fail>.mark,.scorer-error>.mark{color:#c62828;font-weight:bold}.scorer-skipped>.mark{color:#777}</style>
</head><body>
<h1>${esc(report.title)}</h1>
${parts.filter(Boolean).join('\n')}
<script>${SCRIPT}</script>
</body></html>
`;
}
