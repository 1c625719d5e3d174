import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { evaluateTraces } from '../../../src/evaluation/evaluate-traces.js';
import { parsePolicy } from '../../../src/policy/parse-policy.js';
import { ToolwatchSpanProcessor } from '../../../src/processor/toolwatch-span-processor.js';
import type { MisuseEvent, Policy, Verdict } from '../../../src/types.js';
import { buildGroundTruth } from '../harness/build-ground-truth.js';
import { multiStep, WEATHER_AGENT } from '../harness/scenario-scripts.js';
import { Script } from '../harness/script.js';
import { spansToOtlpJson } from '../harness/spans-to-otlp-json.js';
import { ToolRecorder } from '../harness/tool-recorder.js';
import type { Framework, GroundTruth } from '../harness/types.js';
import { ParentFirstReplay } from '../processor/parent-first.js';

/** The tool the guard refuses: the model asks for it in its second turn (the `multi_step` script). */
export const REFUSED_TOOL = 'celsiusToFahrenheit';
/** The model's last turn: the run reached its answer. */
export const FINAL_TEXT = 'It is 18°C (64.4°F) in Paris.';

/** Which check refuses the model's second call (celsiusToFahrenheit). */
export type GuardCase = 'forbidden' | 'call_budget';

export const GUARD_CASES: readonly GuardCase[] = ['forbidden', 'call_budget'];

/**
 * `forbidden`: getWeather expected, celsiusToFahrenheit forbidden. `call_budget`: one call per
 * run, so the second is refused, which holds only if the guard counts the run's first call.
 * Either way the rule enforces its check before the call.
 */
export function guardPolicy(check: GuardCase = 'forbidden'): Policy {
  const scorer =
    check === 'forbidden'
      ? { kind: 'trajectory', expected_tools: ['getWeather'], forbidden_tools: [REFUSED_TOOL] }
      : { kind: 'trajectory', max_calls: 1 };
  return parsePolicy({
    version: 1,
    redact: { values: false },
    rules: [
      {
        name: 'weather',
        match: { agent: '*' },
        guard: { mode: 'enforce', checks: [check] },
        scorers: [scorer],
      },
    ],
  });
}

/** What a framework's guarded run hands back to the checks. */
export interface FrameworkRun {
  spans: ReadableSpan[];
  /** What the model received in each of its calls, as JSON text, in call order. */
  modelInputs: string[];
  /** The run's answer. */
  text: string;
}

export interface GuardedRun extends FrameworkRun {
  check: GuardCase;
  groundTruth: GroundTruth;
  recorder: ToolRecorder;
  live: Verdict[];
  misuses: MisuseEvent[];
  /** `evaluateTraces` on the OTLP/JSON encoding of the exported spans: what the gateway or the CLI judges. */
  offline: Verdict[];
}

/** A framework run with the processor as its guard: `run` builds the agent with the adapter. */
export type GuardedScenario = (setup: {
  guard: ToolwatchSpanProcessor;
  policy: Policy;
  /** Processors to attach next to the harness exporter (the processor, replay-wrapped for Mastra). */
  spanProcessors: SpanProcessor[];
  script: Script;
  recorder: ToolRecorder;
}) => Promise<FrameworkRun>;

/** Runs the `multi_step` script with the processor attached and guarding, then judges it offline too. */
export async function runGuarded(
  framework: Framework,
  scenario: GuardedScenario,
  check: GuardCase = 'forbidden',
): Promise<GuardedRun> {
  const policy = guardPolicy(check);
  const live: Verdict[] = [];
  const misuses: MisuseEvent[] = [];
  const processor = new ToolwatchSpanProcessor({
    policy,
    onVerdict: (v) => live.push(v),
    onMisuse: (m) => misuses.push(m),
  });
  const attached = framework === 'mastra-v1' ? new ParentFirstReplay(processor) : processor;
  const script = new Script(multiStep(WEATHER_AGENT));
  const recorder = new ToolRecorder();
  const run = await scenario({ guard: processor, policy, spanProcessors: [attached], script, recorder });
  await processor.forceFlush();
  await processor.shutdown();
  const offline = await evaluateTraces(spansToOtlpJson(run.spans), policy);
  return {
    ...run,
    check,
    groundTruth: buildGroundTruth(framework, 'multi_step', script, recorder.calls),
    recorder,
    live,
    misuses,
    offline,
  };
}
