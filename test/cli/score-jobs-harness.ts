/**
 * What the `--jobs` tests share: a policy, OTLP requests from spans, the CLI run in process,
 * and the comparison of one thread with N.
 */
import type { Readable } from 'node:stream';
import { expect } from 'vitest';
import { main } from '../../src/cli/main.js';

export const POLICY = `version: 1
rules:
  - name: refunds
    match: { agent: "refund-*" }
    scorers:
      - kind: trajectory
        expected_tools: [get_order_detail, check_refund_policy]
        forbidden_tools: [submit_refund]
        max_calls: 4
        arg_constraints: { get_order_detail: { order_id: { equals: A1024 } } }
        expected_order: [[get_order_detail, check_refund_policy]]
        risk: high
      - kind: tool_order
        expected_tool_order: [get_order_detail, check_refund_policy]
gates:
  tool_selection_accuracy: { min: 0.5 }
  forbidden_tool_calls: { max: 1000 }
`;

export type Span = Record<string, unknown>;

/** One ExportTraceServiceRequest holding `spans`. */
export const request = (spans: Span[]) => ({
  resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: 'test' }, spans }] }],
});

/** `toolwatch score ARGS` in process: exit code, stdout and stderr. */
export async function score(args: string[], stdin?: () => Readable) {
  let stdout = '';
  let stderr = '';
  const code = await main(['score', ...args], {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    ...(stdin ? { stdin: stdin() } : {}),
  });
  return { code, stdout, stderr };
}

/** Non-empty lines, sorted: output compared whatever the order of its lines. */
export const lines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .sort();

export const summary = (stderr: string) => stderr.split('\n').find((l) => l.includes(' runs scored, '));

type Result = Awaited<ReturnType<typeof score>>;

/**
 * What must agree between one thread and N. Past 20 problems of a kind the rest are counted,
 * not shown, and which 20 are shown follows the order they are found in: then the problems
 * that name a place under `dir` are compared by count only.
 */
export function comparable(r: Result, dir: string) {
  const shown = r.stderr.includes('problems not shown')
    ? lines(r.stderr).filter((l) => !l.startsWith(`toolwatch score: ${dir}`))
    : lines(r.stderr);
  return { code: r.code, stdout: lines(r.stdout), stderr: shown, stderrLines: lines(r.stderr).length };
}

/** Scores `args` with one thread and with each of `jobs`; returns the single thread's result. */
export async function sameWithJobs(args: string[], jobs: number[], dir: string, stdin?: () => Readable) {
  const one = await score(args, stdin);
  for (const n of jobs) {
    const many = await score([...args, '--jobs', String(n)], stdin);
    expect({ jobs: n, ...comparable(many, dir) }).toEqual({ jobs: n, ...comparable(one, dir) });
  }
  return one;
}
