import { describe, expect, it } from 'vitest';
import { checkGates } from '../../src/evaluation/check-gates.js';
import { evaluateTraces } from '../../src/evaluation/evaluate-traces.js';
import { parsePolicyText } from '../../src/policy/load-policy.js';
import { JunitSpool, junitXml } from '../../src/report/junit.js';
import { renderHtml } from '../../src/report/render-html.js';
import { renderMarkdown } from '../../src/report/render-markdown.js';
import { renderText, WHY_WIDTH } from '../../src/report/render-text.js';
import { ReportBuilder } from '../../src/report/report-builder.js';
import { fixture, fixtureReport, POLICY, trace } from './report-fixture.js';

describe('grouped reports', () => {
  it('groups by rule, scorer, tool (first call vs final success, retries), intent and risk', async () => {
    const { builder } = await fixtureReport();
    const r = builder.build();
    expect(r.runs).toBe(14);
    expect(r.passed).toBe(10);
    expect(r.byRule.map((x) => [x.key, x.total, x.passed])).toEqual([
      ['refunds', 10, 7],
      ['shipping', 4, 3],
    ]);
    const tool = Object.fromEntries(r.byTool.map((t) => [t.tool, t]));
    // Run 1 looked the wrong order up first, then retried with the right one.
    expect(tool.get_order_detail).toMatchObject({
      expected: 10,
      calls: 11,
      firstCallCorrect: 8,
      finalSuccess: 9,
      retries: 1,
      argMismatches: 2,
    });
    expect(tool.submit_refund).toMatchObject({ expected: 0, forbidden: 1 });
    expect(tool.lookup_shipping).toMatchObject({ expected: 4, finalSuccess: 3 });
    expect(r.byIntent.map((x) => [x.key, x.total, x.passed])).toEqual([
      ['order_status', 4, 3],
      ['refund_check', 10, 7],
    ]);
    expect(r.byRisk.map((x) => [x.key, x.total, x.passed])).toEqual([
      ['high', 10, 7],
      ['low', 4, 3],
    ]);
    expect(r.failing.map((f) => [Number.parseInt(f.trace_id, 16), f.file])).toEqual([
      [1, 'refunds.jsonl.gz'],
      [2, 'refunds.jsonl.gz'],
      [3, 'refunds.jsonl.gz'],
      [14, 'shipping.jsonl'],
    ]);
    // The scorer's reason, as the JSON verdict has it; redacted by default: tool and field
    // names, no values.
    expect(r.failing[1]!.reasons).toEqual(['trajectory: get_order_detail.order_id failed equals']);
  });

  it("counts records judged by no scorer in their scorers' skipped column only, never as runs that passed", async () => {
    const { policy, verdicts } = await fixture();
    const sampledOut = parsePolicyText(POLICY.replace('version: 1', 'version: 1\nsampling: { ratio: 0 }'));
    const unjudged = await evaluateTraces(
      [trace(99, 'refund-agent', [['submit_refund', 'A1024']])],
      sampledOut,
    );
    expect(unjudged.map((v) => [v.passed, v.results.map((r) => r.label)])).toEqual([[null, ['skipped']]]);
    const builder = new ReportBuilder({ policy });
    for (const v of [...verdicts, ...unjudged]) builder.add(v);
    const r = builder.build();
    // The 14 judged runs, as without the record.
    expect([r.runs, r.passed]).toEqual([14, 10]);
    expect(r.byRule.map((x) => [x.key, x.total, x.passed])).toEqual([
      ['refunds', 10, 7],
      ['shipping', 4, 3],
    ]);
    expect(r.byScorer.find((x) => x.rule === 'refunds')).toMatchObject({ ran: 10, skipped: 1 });

    // Alone, the record is no run that passed, in every format.
    const alone = new ReportBuilder({ policy });
    for (const v of unjudged) alone.add(v);
    const report = alone.build();
    expect([report.runs, report.passed]).toEqual([0, 0]);
    expect(renderText(report)).not.toContain('every run passed');
    expect(renderMarkdown(report)).not.toContain('Every run passed');
    expect(renderHtml(report)).not.toContain('Every run passed');
    expect(renderHtml(report)).toContain('<p>No run was judged.</p>');
  });

  it('keeps at most maxFailing failing runs and counts the rest', async () => {
    const { policy, verdicts } = await fixture();
    const builder = new ReportBuilder({ policy, maxFailing: 2 });
    for (const v of verdicts) builder.add(v);
    const r = builder.build();
    expect(r.failing).toHaveLength(2);
    expect(r.failingOmitted).toBe(2);
    expect(renderText(r)).toContain('failing runs: 4 (first 2 shown)');
  });

  it('table and Markdown carry the grid, every grouping, the gates and the failing runs', async () => {
    const { builder, policy, verdicts } = await fixtureReport();
    builder.setGates(checkGates(verdicts, policy));
    const r = builder.build();
    const text = renderText(r);
    expect(text).toMatch(/^flaky\s+4\/6\s+0\.67\s+1\s+learning-zone$/m);
    expect(text).toMatch(/^get_order_detail\s+10\s+8 \(80\.0%\)\s+9 \(90\.0%\)\s+1\s+0\s+2$/m);
    expect(text).toContain('gate forbidden_tool_calls: 1 (max 0) FAILED');
    const md = renderMarkdown(r);
    expect(md).toContain('| hard | 0/6 | 0.00 | 0 | saturated-fail |');
    expect(md).toContain('| get_order_detail | 10 | 80.0% | 90.0% | 1 | 0 | 2 |');
    expect(md).toContain('| order_status | 4 | 3 | 75.0% |');
    expect(md).toContain('| high | 10 | 7 | 70.0% |');
    expect(md).toContain('❌ gate forbidden_tool_calls: 1 (max 0) FAILED');
    expect(md).toMatch(
      /\| `0{31}3` \| refund-agent \| refunds \| refunds\.jsonl\.gz \| trajectory: forbidden tool submit_refund was executed \(1 call\) \|/,
    );
  });

  it('JUnit from the spool equals JUnit from memory, with exact counts', async () => {
    const { verdicts, policy } = await fixture();
    const spool = new JunitSpool(policy.redact);
    for (const v of verdicts) await spool.add(v);
    let streamed = '';
    await spool.finish((t) => {
      streamed += t;
    });
    expect(streamed).toBe(junitXml(verdicts, policy.redact));
    expect(streamed).toContain(
      '<testsuites name="toolwatch" tests="14" failures="4" errors="0" skipped="0">',
    );
  });
});

describe('reasons and groupings in every format', () => {
  const LONG = Array.from({ length: 8 }, (_, i) => `lookup_customer_record_number_${i}`);
  const UNTAGGED = `version: 1
rules:
  - name: support
    match: { agent: "support-*" }
    scorers:
      - kind: tool_calls
        expected_tools: [${LONG.join(', ')}]
      - kind: trajectory
        expected_tools: [${LONG[0]}]
`;

  it('carries the JSON verdict’s reason: cut to the column in table and Markdown, whole in HTML', async () => {
    const policy = parsePolicyText(UNTAGGED);
    const verdicts = await evaluateTraces([trace(1, 'support-agent', [['get_order_detail', 'A1']])], policy);
    const reason = verdicts[0]!.results[0]!.reason!;
    expect(reason).toContain(`expected tool '${LONG[7]}' has no clean execution`);
    const why = `tool_calls: ${reason}; trajectory: ${verdicts[0]!.results[1]!.reason}`;
    expect(why.length).toBeGreaterThan(WHY_WIDTH);
    const builder = new ReportBuilder({ policy });
    for (const v of verdicts) builder.add(v);
    const r = builder.build();
    expect(r.failing[0]!.reasons[0]).toBe(`tool_calls: ${reason}`);
    const cut = `${why.slice(0, WHY_WIDTH - 1)}…`;
    expect(
      renderText(r)
        .split('\n')
        .find((l) => l.startsWith('0'.repeat(31))),
    ).toMatch(new RegExp(`  ${cut.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
    expect(renderMarkdown(r)).toContain(`| ${cut} |`);
    // Whole in HTML, as in the JSON verdict.
    const html = renderHtml(r);
    expect(html).toContain(`tool_calls: ${reason}<br>trajectory: `);
  });

  it('prints no By intent or By risk section when no scorer sets either', async () => {
    const policy = parsePolicyText(UNTAGGED);
    const verdicts = await evaluateTraces([trace(1, 'support-agent', [[LONG[0]!, 'A1']])], policy);
    const builder = new ReportBuilder({ policy });
    for (const v of verdicts) builder.add(v);
    const r = builder.build();
    expect([r.byIntent, r.byRisk]).toEqual([[], []]);
    const text = renderText(r);
    expect(text).not.toMatch(/^(intent|risk)\s+results/m);
    expect(text).not.toContain('(none)');
    const md = renderMarkdown(r);
    expect(md).not.toContain('### By intent');
    expect(md).not.toContain('### By risk');
    const html = renderHtml(r);
    expect(html).not.toContain('id="by-intent"');
    expect(html).not.toContain('id="by-risk"');
    // The tagged fixture keeps both.
    const tagged = (await fixtureReport()).builder.build();
    expect(renderMarkdown(tagged)).toContain('### By intent');
  });
});
