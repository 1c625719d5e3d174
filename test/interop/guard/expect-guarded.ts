import { expect } from 'vitest';
import { spansFromOtlpJson } from '../../../src/conventions/from-otlp-json.js';
import { reconstructTraces } from '../../../src/reconstruction/reconstruct-trace.js';
import { runsAsTruth } from '../harness/runs-as-truth.js';
import { spansToOtlpJson } from '../harness/spans-to-otlp-json.js';
import { sortVerdicts } from '../processor/run-live.js';
import { FINAL_TEXT, type GuardedRun, REFUSED_TOOL } from './guarded-run.js';

/** The refusal the model reads, as the adapters word it by default, with the core's reason. */
const REFUSAL = {
  forbidden: `Refused by policy: the ${REFUSED_TOOL} call was not run (tool ${REFUSED_TOOL} is forbidden (rule weather))`,
  call_budget: `Refused by policy: the ${REFUSED_TOOL} call was not run (the run has made 1 tool calls, max_calls is 1 (rule weather))`,
};

/**
 * What every framework's guard must do: the refused tool's own code never runs, the model reads
 * the reason in its next call, the run reaches its answer, and the trace toolwatch judges holds
 * the call as refused (never executed), with the same verdict live and offline, and the refusal
 * is reported to `onMisuse` as blocked.
 */
export function expectGuarded(run: GuardedRun, options: { viaProcessor?: boolean } = {}): void {
  expect(run.recorder.calls.map((c) => c.name)).toEqual(['getWeather']);
  expect(run.modelInputs).toHaveLength(3);
  expect(run.modelInputs[1]).not.toContain('Refused by policy');
  expect(run.modelInputs[2]).toContain(REFUSAL[run.check]);
  expect(run.text).toBe(FINAL_TEXT);

  // The ground truth (script + what the tools recorded) says refused, request-only; so does the
  // reconstruction of the exported trace, as the gateway and `toolwatch score` decode it.
  expect(run.groundTruth.runs[0]!.calls).toContainEqual(
    expect.objectContaining({ name: REFUSED_TOOL, status: 'refused', requestOnly: true }),
  );
  const traces = reconstructTraces(spansFromOtlpJson(spansToOtlpJson(run.spans)));
  expect(runsAsTruth(traces)).toEqual(run.groundTruth.runs);
  expect(run.offline.length).toBeGreaterThan(0);
  expect(sortVerdicts(run.live)).toEqual(sortVerdicts(run.offline));
  // The processor's decision reaches onMisuse (not where the adapter decides from the policy).
  if (options.viaProcessor !== false) {
    expect(run.misuses).toContainEqual(
      expect.objectContaining({ tool: REFUSED_TOOL, kind: run.check, blocked: true }),
    );
  }
}
