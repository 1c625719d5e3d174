import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RedactOptions, Verdict } from '../types.js';
import { resultReason } from './result-reason.js';

export interface JunitCounts {
  tests: number;
  failures: number;
  errors: number;
  skipped: number;
}

function xml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '');
}

function attrs(c: JunitCounts): string {
  return `tests="${c.tests}" failures="${c.failures}" errors="${c.errors}" skipped="${c.skipped}"`;
}

/**
 * One `<testcase>` per (run, scorer): classname `rule.agent` (CI viewers group by it), name
 * `scorer trace/span`, `file` the trace file. Counts are added to `counts`.
 */
export function junitTestcases(
  v: Verdict,
  counts: JunitCounts,
  redact?: RedactOptions,
  file?: string,
): string {
  let out = '';
  for (const r of v.results) {
    counts.tests++;
    const open = `    <testcase classname="${xml(`${v.rule}.${v.agent}`)}" name="${xml(`${r.scorer} ${v.trace_id}/${v.span_id}`)}"${
      file ? ` file="${xml(file)}"` : ''
    }`;
    const why = xml(resultReason(r, redact) || r.label);
    if (r.label === 'pass') out += `${open}/>\n`;
    else if (r.label === 'skipped') {
      counts.skipped++;
      out += `${open}><skipped message="${why}"/></testcase>\n`;
    } else if (r.label === 'error') {
      counts.errors++;
      out += `${open}><error message="${why}"/></testcase>\n`;
    } else {
      counts.failures++;
      out += `${open}><failure message="${why}"/></testcase>\n`;
    }
  }
  return out;
}

function head(counts: JunitCounts, suite: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="toolwatch" ${attrs(counts)}>\n  <testsuite name="${xml(suite)}" ${attrs(counts)}>\n`;
}

const FOOT = '  </testsuite>\n</testsuites>\n';

/** JUnit XML for verdicts held in memory. */
export function junitXml(verdicts: readonly Verdict[], redact?: RedactOptions, suite = 'toolwatch'): string {
  const counts: JunitCounts = { tests: 0, failures: 0, errors: 0, skipped: 0 };
  const body = verdicts.map((v) => junitTestcases(v, counts, redact)).join('');
  return head(counts, suite) + body + FOOT;
}

/**
 * JUnit XML for a stream of verdicts in bounded memory: test cases are spooled to a
 * temporary file, since the counts the header carries are known only at the end.
 */
export class JunitSpool {
  private readonly counts: JunitCounts = { tests: 0, failures: 0, errors: 0, skipped: 0 };
  private dir: string | undefined;
  private stream: WriteStream | undefined;

  constructor(
    private readonly redact?: RedactOptions,
    private readonly suite = 'toolwatch',
  ) {}

  async add(v: Verdict, file?: string): Promise<void> {
    if (!this.stream) {
      this.dir = await mkdtemp(join(tmpdir(), 'toolwatch-junit-'));
      this.stream = createWriteStream(join(this.dir, 'cases.xml'));
    }
    if (!this.stream.write(junitTestcases(v, this.counts, this.redact, file))) {
      await new Promise<void>((resolve) => this.stream!.once('drain', () => resolve()));
    }
  }

  /** Writes the whole document through `write` and removes the spool. */
  async finish(write: (text: string) => void | Promise<void>): Promise<void> {
    await write(head(this.counts, this.suite));
    if (this.stream && this.dir) {
      const stream = this.stream;
      await new Promise<void>((resolve, reject) => {
        stream.once('error', reject);
        stream.end(() => resolve());
      });
      try {
        for await (const chunk of createReadStream(join(this.dir, 'cases.xml'), { encoding: 'utf8' })) {
          await write(chunk as string);
        }
      } finally {
        await rm(this.dir, { recursive: true, force: true });
      }
    }
    await write(FOOT);
  }
}

/** One rollout for `rolloutsJunit`. */
export interface JunitRollout {
  case: string;
  rollout: number;
  traceId: string;
  passed: boolean;
  error?: string;
  verdict?: Verdict;
}

/** JUnit XML for rollouts: a suite per case, a test case per rollout (failure = its reasons or error). */
export function rolloutsJunit(rollouts: readonly JunitRollout[], redact?: RedactOptions): string {
  const cases = [...new Set(rollouts.map((r) => r.case))];
  const all: JunitCounts = { tests: 0, failures: 0, errors: 0, skipped: 0 };
  const suites: string[] = [];
  for (const c of cases) {
    const counts: JunitCounts = { tests: 0, failures: 0, errors: 0, skipped: 0 };
    const body: string[] = [];
    for (const r of rollouts.filter((x) => x.case === c)) {
      counts.tests++;
      const open = `    <testcase classname="${xml(c)}" name="${xml(`rollout ${r.rollout} ${r.traceId}`)}"`;
      if (r.error !== undefined) {
        counts.errors++;
        body.push(`${open}><error message="${xml(r.error)}"/></testcase>`);
      } else if (!r.passed) {
        counts.failures++;
        const why = r.verdict
          ? r.verdict.results
              .filter((x) => x.label === 'fail' || x.label === 'error')
              .map((x) => `${x.scorer}: ${resultReason(x, redact)}`)
              .join('; ')
          : 'no verdict';
        body.push(`${open}><failure message="${xml(why)}"/></testcase>`);
      } else body.push(`${open}/>`);
    }
    for (const key of ['tests', 'failures', 'errors', 'skipped'] as const) all[key] += counts[key];
    suites.push(`  <testsuite name="${xml(c)}" ${attrs(counts)}>\n${body.join('\n')}\n  </testsuite>`);
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="toolwatch rollouts" ${attrs(all)}>\n${suites.join('\n')}\n</testsuites>\n`;
}
