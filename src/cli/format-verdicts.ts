import { evaluationExplanation } from '../emission/events.js';
import type { RedactOptions, ScorerResult, Verdict } from '../types.js';

/**
 * Human and CI renderings of verdicts for `toolwatch score --format`. Reasons go through the
 * same explanation as emitted telemetry, so `redact.values` keeps values out of reports too.
 */
export type ReportFormat = 'json' | 'table' | 'junit' | 'markdown' | 'html';

export const REPORT_FORMATS: readonly ReportFormat[] = ['json', 'table', 'junit', 'markdown', 'html'];

export function formatVerdicts(verdicts: Verdict[], format: ReportFormat, redact?: RedactOptions): string {
  switch (format) {
    case 'json':
      return verdicts.map((v) => `${JSON.stringify(v)}\n`).join('');
    case 'table':
      return formatTable(verdicts);
    case 'junit':
      return formatJunit(verdicts, redact);
    case 'markdown':
      return formatMarkdown(verdicts, redact);
    case 'html':
      return formatHtml(verdicts, redact);
  }
}

function failedScorers(v: Verdict): string {
  return v.results
    .filter((r) => r.label === 'fail' || r.label === 'error')
    .map((r) => (r.label === 'error' ? `${r.scorer} (error)` : r.scorer))
    .join(', ');
}

function formatTable(verdicts: Verdict[]): string {
  const rows = verdicts.map((v) => [
    v.trace_id.slice(0, 8),
    v.span_id,
    v.agent,
    v.rule,
    v.passed ? 'pass' : 'FAIL',
    failedScorers(v),
  ]);
  const head = ['trace', 'span', 'agent', 'rule', 'verdict', 'failed'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(head), ...rows.map(line), '', summaryLine(verdicts), ''].join('\n');
}

function summaryLine(verdicts: Verdict[]): string {
  return `${verdicts.length} verdicts, ${verdicts.filter((v) => v.passed).length} passed`;
}

interface Counts {
  tests: number;
  failures: number;
  errors: number;
  skipped: number;
}

function count(results: ScorerResult[]): Counts {
  return {
    tests: results.length,
    failures: results.filter((r) => r.label === 'fail').length,
    errors: results.filter((r) => r.label === 'error').length,
    skipped: results.filter((r) => r.label === 'skipped').length,
  };
}

function xml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '');
}

function attrs(c: Counts): string {
  return `tests="${c.tests}" failures="${c.failures}" errors="${c.errors}" skipped="${c.skipped}"`;
}

/** JUnit XML: a suite per rule, a test case per (run, scorer). */
function formatJunit(verdicts: Verdict[], redact?: RedactOptions): string {
  const rules = [...new Set(verdicts.map((v) => v.rule))];
  const all = count(verdicts.flatMap((v) => v.results));
  const out = ['<?xml version="1.0" encoding="UTF-8"?>', `<testsuites name="toolwatch" ${attrs(all)}>`];
  for (const rule of rules) {
    const mine = verdicts.filter((v) => v.rule === rule);
    out.push(`  <testsuite name="${xml(rule)}" ${attrs(count(mine.flatMap((v) => v.results)))}>`);
    for (const v of mine) {
      for (const r of v.results) {
        const name = `${r.scorer} ${v.trace_id}/${v.span_id}`;
        const open = `    <testcase classname="${xml(`${rule}.${v.agent}`)}" name="${xml(name)}"`;
        const why = xml(evaluationExplanation(r, redact) || r.label);
        if (r.label === 'pass') out.push(`${open}/>`);
        else if (r.label === 'skipped') out.push(`${open}><skipped message="${why}"/></testcase>`);
        else out.push(`${open}><${r.label === 'error' ? 'error' : 'failure'} message="${why}"/></testcase>`);
      }
    }
    out.push('  </testsuite>');
  }
  out.push('</testsuites>', '');
  return out.join('\n');
}

function md(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

/** Markdown for pull-request comments: pass rate per rule, then the failing runs. */
function formatMarkdown(verdicts: Verdict[], redact?: RedactOptions): string {
  const out = ['## toolwatch', '', '| rule | runs | passed | pass rate |', '| --- | ---: | ---: | ---: |'];
  for (const rule of [...new Set(verdicts.map((v) => v.rule))]) {
    const mine = verdicts.filter((v) => v.rule === rule);
    const passed = mine.filter((v) => v.passed).length;
    out.push(`| ${md(rule)} | ${mine.length} | ${passed} | ${((100 * passed) / mine.length).toFixed(1)}% |`);
  }
  const failing = verdicts.filter((v) => !v.passed);
  out.push('');
  if (failing.length === 0) {
    out.push('Every run passed.', '');
    return out.join('\n');
  }
  out.push(
    '### Failing runs',
    '',
    '| trace | agent | rule | scorer | why |',
    '| --- | --- | --- | --- | --- |',
  );
  for (const v of failing) {
    for (const r of v.results.filter((x) => x.label === 'fail' || x.label === 'error')) {
      out.push(
        `| \`${v.trace_id}\` | ${md(v.agent)} | ${md(v.rule)} | ${md(r.scorer)}${r.label === 'error' ? ' (error)' : ''} | ${md(evaluationExplanation(r, redact))} |`,
      );
    }
  }
  out.push('');
  return out.join('\n');
}

/** A self-contained HTML page (no scripts, no external resources). */
function formatHtml(verdicts: Verdict[], redact?: RedactOptions): string {
  const rows = verdicts
    .map((v) => {
      const failed = v.results.filter((r) => r.label === 'fail' || r.label === 'error');
      const why = failed
        .map((r) => `${xml(r.scorer)}: ${xml(evaluationExplanation(r, redact))}`)
        .join('<br>');
      return `<tr class="${v.passed ? 'pass' : 'fail'}"><td><code>${xml(v.trace_id)}</code></td><td>${xml(v.agent)}</td><td>${xml(v.rule)}</td><td>${v.passed ? 'pass' : 'FAIL'}</td><td>${why}</td></tr>`;
    })
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>toolwatch report</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:left;vertical-align:top}tr.fail td{background:#fff0f0}</style>
</head><body>
<h1>toolwatch report</h1>
<p>${xml(summaryLine(verdicts))}</p>
<table><thead><tr><th>trace</th><th>agent</th><th>rule</th><th>verdict</th><th>why</th></tr></thead>
<tbody>
${rows}
</tbody></table>
</body></html>
`;
}
