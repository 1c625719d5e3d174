import { Readable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { ProblemLog } from '../../src/cli/problem-log.js';
import { scoreStream } from '../../src/cli/score-stream.js';
import { parsePolicyText } from '../../src/policy/load-policy.js';
import { TraceBuilder } from '../helpers/trace-builder.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const PLACEHOLDER = 'f'.repeat(32);
const t = new TraceBuilder({ traceId: PLACEHOLDER });
const a = t.agent('refund-agent');
a.llm({ toolCalls: [{ name: 'get_order_detail', id: 'c1', args: { order_id: 'A1024' } }] });
a.tool('get_order_detail', { id: 'c1', args: { order_id: 'A1024' }, result: { total: 42.5 } });
a.tool('check_refund_policy', { id: 'c2', args: { order_id: 'A1024' }, result: { eligible: true } });
const TEMPLATE = JSON.stringify(t.toOtlp());

const RUNS = 40_000;

describe('toolwatch score memory', () => {
  it('heap after GC does not grow with the number of runs streamed (40,000 runs through stdin)', async () => {
    function* lines() {
      for (let i = 1; i <= RUNS; i++)
        yield `${TEMPLATE.replaceAll(PLACEHOLDER, i.toString(16).padStart(32, '0'))}\n`;
    }
    const policy = parsePolicyText(`version: 1
rules:
  - name: r
    scorers:
      - kind: trajectory
        expected_tools: [get_order_detail, check_refund_policy]
`);
    const heap: number[] = [];
    let n = 0;
    const io = { stdout: () => {}, stderr: () => {}, stdin: Readable.from(lines()) };
    const stats = await scoreStream({
      files: ['-'],
      policy,
      io,
      log: new ProblemLog(io.stderr, 'toolwatch score'),
      onVerdict: (v) => {
        JSON.stringify(v);
        if (++n % 10_000 === 0) {
          gc();
          heap.push(process.memoryUsage().heapUsed);
        }
      },
    });
    expect(stats.runs).toBe(RUNS);
    // A leak of 1 KB per run would add 30 MB between the first and the last sample; the
    // previous whole-file reader grew by ~37 KB per run.
    const growthMb = (heap.at(-1)! - heap[0]!) / 1024 / 1024;
    expect(growthMb).toBeLessThan(12);
  }, 120_000);
});
