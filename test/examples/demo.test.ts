import { describe, expect, it } from 'vitest';
import { runExample } from './run-example.js';

describe('npm run demo', () => {
  it('judges three scripted refund runs live and raises the forbidden write as it happens', async () => {
    const { code, output } = await runExample('examples/demo.ts');
    expect(code, output).toBe(0);

    const verdicts = [...output.matchAll(/\[verdict\] (PASS|FAIL)\s+agent=(\S+) rule=(\S+)/g)];
    expect(verdicts.map((m) => [m[1], m[2], m[3]])).toEqual([
      ['PASS', 'refund-agent', 'refunds'],
      ['FAIL', 'refund-agent', 'refunds'],
      ['FAIL', 'refund-agent', 'refunds'],
    ]);

    // The misuse alert is printed while the third run is still going: before its answer and verdict.
    const forbidden = output.indexOf('=== forbidden write ===');
    const misuse = output.indexOf(
      '[misuse]  LIVE forbidden tool "submit_refund" in refund-agent (rule refunds)',
    );
    const answer = output.indexOf('agent answered: I have submitted your refund.');
    expect(misuse).toBeGreaterThan(forbidden);
    expect(misuse).toBeLessThan(answer);
    expect(output.match(/\[misuse\]/g)).toHaveLength(1);

    // The hallucinated order id fails on its argument checks, not on tool selection.
    const second = output.slice(output.indexOf('=== hallucinated'), forbidden);
    expect(second).toMatch(
      /fail\s+reliability\s+score=0\.00\s+failed_argument_checks=\['get_order_detail'\]/,
    );
    expect(second).toMatch(/pass\s+tool_order\s+score=1\.00/);
    // The judge (escalated: the run failed) compares the arguments with the request and the
    // answer with the tool results, and fails the made-up id on both counts.
    const judged = second.slice(second.indexOf('llm_judge'));
    expect(second).toMatch(/fail\s+llm_judge\s+score=0\.00/);
    expect(judged.replace(/\s+/g, ' ')).toContain(
      'get_order_detail and check_refund_policy were called for order A9999, but the user asked about A1024; the answer says the order qualifies, but check_refund_policy returned qualifies: false.',
    );

    // Scorers named apart from their kind say their kind; reasons are printed whole.
    expect(output).toContain('grounded (tool_calls)');
    expect(output).toMatch(
      /do not follow \[get_order_detail, check_refund_policy\] in\s+order \(first occurrences\)/,
    );

    // Every exported agent span carries the verdict; every result is in the telemetry: on the
    // agent span, or (the escalated judge of the two failing runs, which answers after the agent
    // span ended) on an `evaluate` span under it. (The passing run's judge is sampled at 5 % by
    // its random trace id: either a `skipped` result on the agent span or a late one.)
    expect(output).toContain('exported agent spans carrying a verdict: 3');
    // One line says why a judge's result is on an `evaluate` span rather than the agent span.
    expect(
      output.match(/an LLM judge answers after the agent span has ended.*`evaluate` span/g),
    ).toHaveLength(1);
    expect(output).not.toContain('not in the exported spans');
    const exported = output.slice(output.indexOf('exported agent spans carrying a verdict'));
    const perTrace = exported.split(/\n(?= {2}trace )/).slice(1);
    expect(perTrace).toHaveLength(3);
    const failing = perTrace.filter((block) => block.includes('toolwatch.evaluation.passed=false'));
    expect(failing).toHaveLength(2);
    for (const block of failing) {
      expect(block).toMatch(
        /on the agent span \(4 events\): reliability, grounded, tool_order, trajectory\n/,
      );
      expect(block).toContain(
        'after the agent span ended, on span "evaluate refund-agent" (a child of the agent span): llm_judge',
      );
    }
    expect(output).toMatch(
      /toolwatch\.evaluation\.passed=false\s+failed=\["reliability","tool_order","trajectory"\]/,
    );
  });
});
