import { gateLine } from './gate-line.js';
import { clip } from './render-text.js';
import { percent } from './report-builder.js';
import type { RateRow, Report } from './report-types.js';

function md(text: string): string {
  return text
    .replace(/\|/g, '\\|')
    .replace(/\r?\n/g, ' ')
    .replace(/[<>]/g, (c) => (c === '<' ? '&lt;' : '&gt;'));
}

function rateTable(title: string, rows: RateRow[], unit: string): string[] {
  if (rows.length === 0) return [];
  return [
    `### By ${title}`,
    '',
    `| ${title} | ${unit} | passed | pass rate |`,
    '| --- | ---: | ---: | ---: |',
    ...rows.map((r) => `| ${md(r.key)} | ${r.total} | ${r.passed} | ${percent(r.passed, r.total)} |`),
    '',
  ];
}

/** Markdown for pull-request comments and job summaries. */
export function renderMarkdown(report: Report): string {
  const out = [
    `## ${md(report.title)}`,
    '',
    `**${report.passed} of ${report.runs} runs passed (${percent(report.passed, report.runs)})**${
      report.input ? ` · ${report.input.files} files · ${report.input.unreadable} unreadable records` : ''
    }`,
    '',
  ];
  if (report.gates && report.gates.length > 0) {
    out.push(
      '### Gates',
      '',
      ...report.gates.map(
        (g) => `- ${g.status === 'failed' ? '❌' : g.status === 'held' ? '✅' : '⏭️'} ${md(gateLine(g))}`,
      ),
      '',
    );
  }
  if (report.grid) {
    const g = report.grid;
    out.push(
      `### Calibration grid (k = ${g.k})`,
      '',
      `saturated-pass: pass ratio ≥ ${g.thresholds.saturatedPass}; saturated-fail: ≤ ${g.thresholds.saturatedFail}; learning-zone: in between. Overall pass rate ${g.passRate === null ? 'n/a' : `${(100 * g.passRate).toFixed(1)}%`}.`,
      '',
      '| case | passed / scored | ratio | errors | class |',
      '| --- | ---: | ---: | ---: | --- |',
      ...g.rows.map(
        (r) =>
          `| ${md(r.case)} | ${r.passed}/${r.scored} | ${r.scored === 0 ? 'n/a' : (r.passed / r.scored).toFixed(2)} | ${r.errors} | ${r.class} |`,
      ),
      '',
    );
  }
  out.push(...rateTable('rule', report.byRule, 'runs'));
  if (report.byScorer.length > 0) {
    out.push(
      '### By scorer',
      '',
      '| rule / scorer | kind | ran | passed | pass rate | errors | skipped |',
      '| --- | --- | ---: | ---: | ---: | ---: | ---: |',
      ...report.byScorer.map(
        (s) =>
          `| ${md(`${s.rule} / ${s.scorer}`)} | ${md(s.kind)} | ${s.ran} | ${s.passed} | ${percent(s.passed, s.ran)} | ${s.errors} | ${s.skipped} |`,
      ),
      '',
    );
  }
  if (report.byTool.length > 0) {
    out.push(
      '### By tool',
      '',
      '| tool | expected in | first call correct | final success | retries | forbidden calls | arg mismatches |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
      ...report.byTool.map(
        (t) =>
          `| ${md(t.tool)} | ${t.expected} | ${percent(t.firstCallCorrect, t.expected)} | ${percent(t.finalSuccess, t.expected)} | ${t.retries} | ${t.forbidden} | ${t.argMismatches} |`,
      ),
      '',
    );
  }
  out.push(...rateTable('intent', report.byIntent, 'results'));
  out.push(...rateTable('risk', report.byRisk, 'results'));
  out.push(...rateTable('tag', report.byTag, 'runs'));
  if (report.failing.length === 0) {
    if (report.runs > 0) out.push('Every run passed.', '');
    return out.join('\n');
  }
  out.push(
    `### Failing runs (${report.failing.length + report.failingOmitted}${report.failingOmitted > 0 ? `, first ${report.failing.length} shown` : ''})`,
    '',
    '| trace | agent | rule | file | why |',
    '| --- | --- | --- | --- | --- |',
    ...report.failing.map(
      (f) =>
        `| \`${f.trace_id}\` | ${md(f.agent)} | ${md(f.rule)} | ${md(f.file ?? '')} | ${md(clip(f.reasons.join('; ')))} |`,
    ),
    '',
  );
  return out.join('\n');
}
