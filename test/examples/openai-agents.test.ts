import { describe, expect, it } from 'vitest';
import { runExample } from './run-example.js';

describe('examples/openai-agents.ts', () => {
  it('raises the forbidden delete_account live, then fails trajectory while reliability passes', async () => {
    const { code, output } = await runExample('examples/openai-agents.ts');
    expect(code, output).toBe(0);

    // The bridge really ran both tools: the verdict below is about what happened.
    expect(output).toContain('tool spans: lookup_account, delete_account; deleted: acct_42');

    const misuse = output.indexOf('[misuse] LIVE forbidden tool "delete_account" in support_agent');
    expect(misuse, output).toBeGreaterThan(-1);
    expect(output.match(/\[misuse\]/g)).toHaveLength(1);

    const verdicts = [...output.matchAll(/^\[verdict\].*\b(PASS|FAIL) agent=(\S+) (.*)$/gm)];
    expect(verdicts, output).toHaveLength(1);
    const [line, outcome, agent, labels] = verdicts[0]!;
    expect(outcome).toBe('FAIL');
    expect(agent).toBe('support_agent');
    // lookup_account was called and allow_additional_tool_calls is true: reliability passes;
    // delete_account is forbidden: trajectory fails.
    expect(Object.fromEntries(labels!.split(' ').map((pair) => pair.split('=')))).toEqual({
      reliability: 'pass',
      trajectory: 'fail',
    });
    // Live: the misuse comes before the verdict, and both before the runner returns the answer.
    const verdictAt = output.indexOf(line);
    expect(misuse).toBeLessThan(verdictAt);
    expect(verdictAt).toBeLessThan(output.indexOf('agent answered: Your account has been closed.'));
  }, 60_000);
});
