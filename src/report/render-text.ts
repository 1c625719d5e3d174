import { gateLine } from './gate-line.js';
import { BY_TOOL_COLUMNS, percent } from './report-builder.js';
import type { RateRow, Report } from './report-types.js';

/** Columns padded to their widest cell; numbers right-aligned. */
export function columns(head: string[], rows: string[][], right: ReadonlySet<number> = new Set()): string[] {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (right.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(head), ...rows.map(line)];
}

/** Width of the failing runs' "why" column in the text and Markdown reports; JSON and HTML keep reasons whole. */
export const WHY_WIDTH = 160;

/** `text` cut to `width` characters, ending with `…` when cut. */
export function clip(text: string, width = WHY_WIDTH): string {
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
}

function rateTable(title: string, rows: RateRow[], unit: string): string[] {
  if (rows.length === 0) return [];
  return [
    '',
    ...columns(
      [title, unit, 'passed', 'rate'],
      rows.map((r) => [r.key, String(r.total), String(r.passed), percent(r.passed, r.total)]),
      new Set([1, 2, 3]),
    ),
  ];
}

/** The terminal report (`--format table`): every grouping, the gates, then the failing runs. */
export function renderText(report: Report): string {
  const out = [
    `${report.title}: ${report.runs} runs, ${report.passed} passed (${percent(report.passed, report.runs)})`,
  ];
  if (report.grid) {
    const g = report.grid;
    out.push(
      '',
      `calibration grid (k=${g.k}; saturated-pass at pass ratio >= ${g.thresholds.saturatedPass}, saturated-fail at <= ${g.thresholds.saturatedFail}, learning-zone between)`,
      ...columns(
        ['case', 'passed', 'ratio', 'errors', 'class'],
        g.rows.map((r) => [
          r.case,
          `${r.passed}/${r.scored}`,
          r.scored === 0 ? 'n/a' : (r.passed / r.scored).toFixed(2),
          String(r.errors),
          r.class,
        ]),
        new Set([1, 2, 3]),
      ),
      `overall pass rate: ${g.passRate === null ? 'n/a' : `${(100 * g.passRate).toFixed(1)}%`}`,
    );
  }
  out.push(...rateTable('rule', report.byRule, 'runs'));
  if (report.byScorer.length > 0) {
    out.push(
      '',
      ...columns(
        ['scorer', 'kind', 'ran', 'passed', 'rate', 'errors', 'skipped', 'mean score'],
        report.byScorer.map((s) => [
          `${s.rule}/${s.scorer}`,
          s.kind,
          String(s.ran),
          String(s.passed),
          percent(s.passed, s.ran),
          String(s.errors),
          String(s.skipped),
          s.ran === 0 ? 'n/a' : (s.scoreSum / s.ran).toFixed(3),
        ]),
        new Set([2, 3, 4, 5, 6, 7]),
      ),
    );
  }
  if (report.byTool.length > 0) {
    out.push(
      '',
      ...columns(
        BY_TOOL_COLUMNS,
        report.byTool.map((t) => [
          t.tool,
          String(t.expected),
          t.expected === 0 ? 'n/a' : `${t.firstCallCorrect} (${percent(t.firstCallCorrect, t.expected)})`,
          t.expected === 0 ? 'n/a' : `${t.finalSuccess} (${percent(t.finalSuccess, t.expected)})`,
          String(t.retries),
          String(t.forbidden),
          String(t.argMismatches),
        ]),
        new Set([1, 2, 3, 4, 5, 6]),
      ),
    );
  }
  out.push(...rateTable('intent', report.byIntent, 'results'));
  out.push(...rateTable('risk', report.byRisk, 'results'));
  out.push(...rateTable('tag', report.byTag, 'runs'));
  if (report.gates && report.gates.length > 0) out.push('', ...report.gates.map(gateLine));
  if (report.failing.length > 0) {
    out.push(
      '',
      `failing runs: ${report.failing.length + report.failingOmitted}${report.failingOmitted > 0 ? ` (first ${report.failing.length} shown)` : ''}`,
      ...columns(
        ['trace', 'agent', 'rule', 'file', 'why'],
        report.failing.map((f) => [f.trace_id, f.agent, f.rule, f.file ?? '', clip(f.reasons.join('; '))]),
      ),
    );
  } else if (report.runs > 0) out.push('', 'every run passed');
  out.push('');
  return out.join('\n');
}
