import type { GateOutcome } from '../evaluation/check-gates.js';
import { isJudged } from '../evaluation/is-judged.js';
import type { Policy, RedactOptions, Verdict } from '../types.js';
import type { RebuiltRun } from './rebuilt-run.js';
import type {
  FailingRun,
  InputStats,
  RateRow,
  Report,
  RolloutGrid,
  ScorerRow,
  ToolRow,
} from './report-types.js';
import { resultReason } from './result-reason.js';
import { scorerExpectations } from './scorer-expectations.js';

export interface ReportBuilderOptions {
  /** Supplies the scorers' risk and intent tags (by rule and scorer name). */
  policy?: Policy;
  /** Default: the policy's (values redacted unless the policy says otherwise). */
  redact?: RedactOptions;
  /** Failing runs kept for the report; the rest are counted. Default 500. */
  maxFailing?: number;
  /** Default `toolwatch report`. */
  title?: string;
  /** Tags by rule name (eval-dataset cases: the case's `tags`), for the by-tag grouping. */
  ruleTags?: ReadonlyMap<string, readonly string[]>;
}

const NONE = '(none)';

/**
 * Aggregates verdicts one at a time into a `Report`, in memory bounded by the number of
 * rules, scorers, tools, intents and risks (not by the number of runs): only the first
 * `maxFailing` failing runs are kept whole.
 */
export class ReportBuilder {
  private runs = 0;
  private passed = 0;
  private readonly byRule = new Map<string, RateRow>();
  private readonly byScorer = new Map<string, ScorerRow>();
  private readonly byTool = new Map<string, ToolRow>();
  private readonly byIntent = new Map<string, RateRow>();
  private readonly byRisk = new Map<string, RateRow>();
  private readonly byTag = new Map<string, RateRow>();
  private readonly tags = new Map<string, { risk?: string; intent?: string }>();
  private readonly failing: FailingRun[] = [];
  private failingOmitted = 0;
  private readonly redact: RedactOptions | undefined;
  private readonly maxFailing: number;
  private gates: GateOutcome[] | undefined;
  private grid: RolloutGrid | undefined;
  private input: InputStats | undefined;

  constructor(private readonly options: ReportBuilderOptions = {}) {
    this.redact = options.redact ?? options.policy?.redact;
    this.maxFailing = options.maxFailing ?? 500;
    this.addPolicy(options.policy);
  }

  /** More rules whose tags the report should know (case policies). */
  addPolicy(policy: Policy | undefined): void {
    for (const rule of policy?.rules ?? []) {
      for (const s of rule.scorers) {
        const risk = s.tags?.risk ?? (s.config.risk as string | undefined);
        const intent = s.tags?.intent ?? (s.config.intent as string | undefined);
        this.tags.set(`${rule.name}\u0000${s.name}`, {
          ...(risk ? { risk } : {}),
          ...(intent ? { intent } : {}),
        });
      }
    }
  }

  /** `rebuilt`: what was rebuilt of the run, shown under a failing run in the HTML report. */
  add(v: Verdict, file?: string, rebuilt?: RebuiltRun): void {
    // A record judged by no scorer counts in its scorers' `skipped` column only: as a run that
    // passed, an unjudged run read "every run passed".
    if (isJudged(v)) {
      this.runs++;
      const passed = v.passed === true;
      if (passed) this.passed++;
      bump(this.byRule, v.rule, passed);
      for (const tag of this.options.ruleTags?.get(v.rule) ?? []) bump(this.byTag, tag, passed);
    }
    for (const r of v.results) {
      const key = `${v.rule}\u0000${r.scorer}`;
      let row = this.byScorer.get(key);
      if (!row) {
        row = {
          rule: v.rule,
          scorer: r.scorer,
          kind: r.kind,
          ran: 0,
          passed: 0,
          errors: 0,
          skipped: 0,
          scoreSum: 0,
        };
        this.byScorer.set(key, row);
      }
      if (r.label === 'skipped') {
        row.skipped++;
        continue;
      }
      row.ran++;
      row.scoreSum += r.score;
      const ok = r.label === 'pass' && r.passed;
      if (ok) row.passed++;
      if (r.label === 'error') row.errors++;
      const tags = this.tags.get(key);
      if (tags?.intent !== undefined || tags?.risk !== undefined || r.kind === 'trajectory') {
        bump(this.byIntent, tags?.intent ?? NONE, ok);
        bump(this.byRisk, tags?.risk ?? NONE, ok);
      }
      if (r.kind === 'trajectory') this.addTools(r.detail);
    }
    if (v.passed === false) {
      if (this.failing.length >= this.maxFailing) this.failingOmitted++;
      else {
        const unmet = v.results.filter((r) => r.label === 'fail' || r.label === 'error');
        this.failing.push({
          trace_id: v.trace_id,
          span_id: v.span_id,
          agent: v.agent,
          rule: v.rule,
          ...(file !== undefined ? { file } : {}),
          reasons: unmet.map(
            (r) => `${r.scorer}${r.label === 'error' ? ' (error)' : ''}: ${resultReason(r, this.redact)}`,
          ),
          expectations: v.results.map((r) => scorerExpectations(r, this.redact)),
          ...(rebuilt ? { rebuilt } : {}),
        });
      }
    }
  }

  /** A failing entry that is not a verdict (a rollout that threw or timed out). */
  addFailing(entry: FailingRun): void {
    if (this.failing.length >= this.maxFailing) this.failingOmitted++;
    else this.failing.push(entry);
  }

  setGates(gates: GateOutcome[]): void {
    this.gates = gates;
  }

  setGrid(grid: RolloutGrid): void {
    this.grid = grid;
  }

  setInput(input: InputStats): void {
    this.input = input;
  }

  build(): Report {
    const byName = (a: { key: string }, b: { key: string }) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
    return {
      title: this.options.title ?? 'toolwatch report',
      ...(this.options.policy ? { policyDigest: this.options.policy.digest } : {}),
      runs: this.runs,
      passed: this.passed,
      ...(this.input ? { input: this.input } : {}),
      byRule: [...this.byRule.values()],
      byScorer: [...this.byScorer.values()],
      byTool: [...this.byTool.values()].sort((a, b) => (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0)),
      byIntent: tagged([...this.byIntent.values()].sort(byName)),
      byRisk: tagged(
        [...this.byRisk.values()].sort((a, b) => riskOrder(a.key) - riskOrder(b.key) || byName(a, b)),
      ),
      byTag: [...this.byTag.values()].sort(byName),
      ...(this.gates ? { gates: this.gates } : {}),
      failing: this.failing,
      failingOmitted: this.failingOmitted,
      ...(this.grid ? { grid: this.grid } : {}),
    };
  }

  private tool(name: string): ToolRow {
    let row = this.byTool.get(name);
    if (!row) {
      row = {
        tool: name,
        expected: 0,
        calls: 0,
        firstCallCorrect: 0,
        finalSuccess: 0,
        retries: 0,
        forbidden: 0,
        argMismatches: 0,
      };
      this.byTool.set(name, row);
    }
    return row;
  }

  private addTools(detail: Record<string, unknown>): void {
    const perTool = detail.per_tool;
    if (perTool && typeof perTool === 'object') {
      for (const [name, t] of Object.entries(perTool as Record<string, Record<string, unknown>>)) {
        if (!t || typeof t !== 'object') continue;
        const row = this.tool(name);
        row.expected++;
        if (typeof t.calls === 'number') row.calls += t.calls;
        if (t.first_call_correct === true) row.firstCallCorrect++;
        if (t.final_success === true) row.finalSuccess++;
        if (typeof t.retries === 'number') row.retries += t.retries;
      }
    }
    const errors = detail.errors;
    if (!Array.isArray(errors)) return;
    for (const e of errors as Array<{ code?: unknown; tool?: unknown }>) {
      if (!e || typeof e.tool !== 'string') continue;
      if (e.code === 'forbidden_tool') this.tool(e.tool).forbidden++;
      else if (e.code === 'arg_mismatch') this.tool(e.tool).argMismatches++;
    }
  }
}

/** A grouping by a tag no scorer sets (every row `(none)`) is no grouping: left out. */
function tagged(rows: RateRow[]): RateRow[] {
  return rows.every((r) => r.key === NONE) ? [] : rows;
}

function bump(map: Map<string, RateRow>, key: string, passed: boolean): void {
  let row = map.get(key);
  if (!row) {
    row = { key, total: 0, passed: 0 };
    map.set(key, row);
  }
  row.total++;
  if (passed) row.passed++;
}

const RISKS = ['critical', 'high', 'medium', 'low'];

function riskOrder(key: string): number {
  const i = RISKS.indexOf(key);
  return i === -1 ? RISKS.length : i;
}

/** `passed / total` as a percentage with one decimal, or `n/a`. */
/** Columns of the by-tool table, shared by the text, Markdown and HTML renderers. */
export const BY_TOOL_COLUMNS = [
  'tool',
  'expected in',
  'first call correct',
  'final success',
  'retries',
  'forbidden calls',
  'arg mismatches',
];

export function percent(passed: number, total: number): string {
  return total === 0 ? 'n/a' : `${((100 * passed) / total).toFixed(1)}%`;
}
