import { describe, expect, it } from 'vitest';
import { formatVerdicts } from '../../src/cli/format-verdicts.js';
import type { ScorerResult, Verdict } from '../../src/types.js';

function result(scorer: string, label: ScorerResult['label'], reason: string | null = null): ScorerResult {
  return {
    scorer,
    kind: 'trajectory',
    passed: label === 'pass',
    score: label === 'pass' ? 1 : 0,
    label,
    reason,
    digest: 'd',
    detail: {},
  };
}

const verdicts: Verdict[] = [
  {
    trace_id: 'aaaaaaaa000000000000000000000001',
    span_id: '0000000000000001',
    agent: 'refund-agent',
    rule: 'refunds',
    passed: true,
    policy_digest: 'p',
    sampled: true,
    results: [result('reliability', 'pass'), result('judge', 'skipped', 'sampled_out')],
  },
  {
    trace_id: 'bbbbbbbb000000000000000000000002',
    span_id: '0000000000000002',
    agent: 'refund-<agent>',
    rule: 'refunds',
    passed: false,
    policy_digest: 'p',
    sampled: true,
    results: [
      result('reliability', 'fail', 'order_id was "A&B" | not <A1024>'),
      result('judge', 'error', 'timed out'),
    ],
  },
];

describe('formatVerdicts', () => {
  it('json: one verdict object per line', () => {
    const lines = formatVerdicts(verdicts, 'json').trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l))).toEqual(verdicts);
  });

  it('junit: a suite per rule and a case per result, with escaped messages', () => {
    const xml = formatVerdicts(verdicts, 'junit');
    expect(xml).toContain('<testsuites name="toolwatch" tests="4" failures="1" errors="1" skipped="1">');
    expect(xml).toContain('<testsuite name="refunds" tests="4" failures="1" errors="1" skipped="1">');
    expect(xml).toContain(
      '<testcase classname="refunds.refund-&lt;agent&gt;" name="reliability bbbbbbbb000000000000000000000002/0000000000000002"><failure message="order_id was &quot;A&amp;B&quot; | not &lt;A1024&gt;"/></testcase>',
    );
    expect(xml).toContain('<error message="timed out"/>');
    expect(xml).toContain('<skipped message="sampled_out"/>');
    expect(xml.match(/<testcase /g)).toHaveLength(4);
  });

  it('junit with redaction keeps reasons out', () => {
    const xml = formatVerdicts(verdicts, 'junit', { values: true });
    expect(xml).not.toContain('A1024');
    expect(xml).toContain('<failure message="fail"/>');
  });

  it('markdown: pass rate per rule and a row per failing scorer', () => {
    const text = formatVerdicts(verdicts, 'markdown');
    expect(text).toContain('| refunds | 2 | 1 | 50.0% |');
    expect(text).toContain(
      '| `bbbbbbbb000000000000000000000002` | refund-<agent> | refunds | reliability | order_id was "A&B" \\| not <A1024> |',
    );
    expect(text).toContain('| judge (error) | timed out |');
  });

  it('html: escapes everything it prints', () => {
    const html = formatVerdicts(verdicts, 'html');
    expect(html).toContain('<td>refund-&lt;agent&gt;</td>');
    expect(html).not.toContain('<A1024>');
    expect(html).toContain('2 verdicts, 1 passed');
  });

  it('table: one line per verdict', () => {
    const lines = formatVerdicts(verdicts, 'table').split('\n');
    expect(lines[1]).toMatch(/^aaaaaaaa\s+0000000000000001\s+refund-agent\s+refunds\s+pass$/);
    expect(lines[2]).toMatch(/FAIL\s+reliability, judge \(error\)$/);
  });
});
