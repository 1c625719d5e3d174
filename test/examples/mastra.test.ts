import { describe, expect, it } from 'vitest';
import { runExample } from './run-example.js';

describe('examples/mastra.ts', () => {
  it("judges Mastra's exported spans: the forbidden delete_account fails trajectory, the verdict rides on the exported agent span", async () => {
    const { code, output } = await runExample('examples/mastra.ts');
    expect(code, output).toBe(0);
    // The agent really ran both tools.
    expect(output).toContain('agent answered: Your account has been closed.');
    expect(output).toMatch(/exported spans: \d+; deleted: acct_42/);

    const misuse = output.indexOf('[misuse] forbidden tool "delete_account" in support_agent (rule support)');
    const verdict = output.indexOf('[verdict] FAIL agent=support_agent reliability=pass trajectory=fail');
    expect(misuse, output).toBeGreaterThan(-1);
    expect(verdict, output).toBeGreaterThan(misuse);
    expect(output.match(/\[misuse\]/g)).toHaveLength(1);
    expect(output.match(/\[verdict\]/g)).toHaveLength(1);

    // Wrapping mode: the span the destination exporter received carries the verdict.
    expect(output).toContain(
      'exported agent span "invoke_agent support_agent" toolwatch.evaluation.passed=false failed=["trajectory"] events=2',
    );
    // evaluateTraces on the exported spans agrees with the processor.
    expect(output).toContain('[offline] FAIL agent=support_agent reliability=pass trajectory=fail');
  }, 60_000);
});
