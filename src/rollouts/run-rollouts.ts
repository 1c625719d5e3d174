import { inspect } from 'node:util';
import { SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import { BasicTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ATTR_TOOLWATCH_CASE_ID, ATTR_TOOLWATCH_ROLLOUT_INDEX } from '../cases/case-id.js';
import { casesPolicy } from '../cases/cases-policy.js';
import type { EvalCase } from '../cases/eval-case.js';
import { loadCases } from '../cases/load-cases.js';
import { checkGates, type GateOutcome } from '../evaluation/check-gates.js';
import { isJudged } from '../evaluation/is-judged.js';
import { ToolwatchSpanProcessor } from '../processor/toolwatch-span-processor.js';
import type { RolloutGrid } from '../report/report-types.js';
import type { Policy, Verdict } from '../types.js';
import { ensureContextPropagation } from './async-context-manager.js';
import { buildGrid, type GridThresholds } from './calibration-grid.js';
import { RolloutSpanCounter } from './rollout-span-counter.js';

/** What an agent module's function receives besides the case input. */
export interface RolloutContext {
  caseId: string;
  case: EvalCase;
  /** 0 … k−1 within the case. */
  rollout: number;
  /** A 32-bit number fixed by (case id, rollout): the same on every run, different per rollout. */
  seed: number;
  /** The case's `context` field. */
  context: unknown;
  /** The tracer of the rollouts' provider: instrument the agent with it (AI SDK: `experimental_telemetry.tracer`). */
  tracer: Tracer;
  /** Aborted when the rollout times out. */
  signal: AbortSignal;
}

/** An agent module's export: `async (input, context) => answer`. */
export type RolloutAgent = (input: unknown, context: RolloutContext) => unknown;

export interface RunRolloutsOptions {
  /** Cases, or the path of a case file. */
  cases: readonly EvalCase[] | string;
  agent: RolloutAgent;
  /**
   * The agent's name on each rollout's span (`gen_ai.agent.name`), so verdicts and reports
   * name the agent that ran. Default: the function's name, or `agent` for an anonymous one.
   */
  agentName?: string;
  /** Rollouts per case. Default 6 (agno's `run_rollouts(env, k=6)`). */
  k?: number;
  /** Rollouts in flight at once. Default 6. */
  concurrency?: number;
  /**
   * Sampling, judge budget, redaction and gates: a built policy or the policy-file form
   * without rules (`{ gates: { forbidden_tool_calls: { max: 0 } } }`); rules are not used.
   * Default: policy defaults, no gates.
   */
  policy?: Policy | Record<string, unknown>;
  /** Judges for `answer_facts` (an `llm_judge` is added to such cases only when judges are given). */
  judges?: Record<string, unknown>;
  /** Per rollout; a rollout over it is aborted and fails. An integer from 1 to 2^31-1. Default 60,000 ms. */
  timeoutMs?: number;
  /** Grid classes. Default saturated-pass at ratio 1, saturated-fail at 0. */
  thresholds?: GridThresholds;
  /** More processors on the rollouts' provider (e.g. an exporter that keeps the traces); flushed at the end, not shut down. */
  spanProcessors?: SpanProcessor[];
  /** Also make the rollouts' provider the global one, for agents traced through the global API. Default false. */
  registerGlobal?: boolean;
  /** Called as each rollout finishes (before its verdict, which may wait for judges). */
  onRollout?: (record: Omit<RolloutRecord, 'passed' | 'verdict' | 'agentSpans'>) => void;
}

export interface RolloutRecord {
  case: string;
  rollout: number;
  seed: number;
  traceId: string;
  /** The verdict passed, some scorer ran (not every result `skipped`), and the agent neither threw nor timed out. */
  passed: boolean;
  /** Why the rollout failed before it could be judged on its merits: the agent's error or `timed out after N ms`. */
  error?: string;
  durationMs: number;
  /**
   * Spans the rollout's trace got besides the rollout span: 0 means the agent is not traced
   * through the rollouts' provider (give its framework `context.tracer`), and its run has no
   * calls to judge.
   */
  agentSpans: number;
  answer?: unknown;
  verdict?: Verdict;
}

export interface RunRolloutsResult {
  grid: RolloutGrid;
  rollouts: RolloutRecord[];
  verdicts: Verdict[];
  /** The dataset's policy: one rule per case. */
  policy: Policy;
  /** The agent's name on the rollout spans and in the verdicts. */
  agent: string;
  gates: GateOutcome[];
}

/** The longest delay `setTimeout` holds. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * agno's `run_rollouts(env, k, concurrency)` for TypeScript agents: runs `agent` k times per
 * case, at most `concurrency` at once, each rollout inside an agent span named after the
 * agent (`invoke_agent <agentName>`) carrying `toolwatch.case.id`, the case input and the
 * agent's answer (`gen_ai.input.messages` / `gen_ai.output.messages`, which judges read); the
 * same `ToolwatchSpanProcessor` captures the agent's spans in process and judges each rollout
 * against its case's rule. An agent that throws or times out fails that rollout only.
 */
export async function runRollouts(options: RunRolloutsOptions): Promise<RunRolloutsResult> {
  const cases = typeof options.cases === 'string' ? await loadCases(options.cases) : [...options.cases];
  const k = options.k ?? 6;
  const concurrency = Math.max(1, options.concurrency ?? 6);
  const timeoutMs = options.timeoutMs ?? 60_000;
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`k must be a positive integer, got ${k}`);
  // Node fires a timer longer than 2^31-1 ms after 1 ms: every rollout would time out at once.
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_TIMER_MS)
    throw new RangeError(`timeoutMs must be an integer from 1 to ${MAX_TIMER_MS}, got ${timeoutMs}`);
  const policy = casesPolicy(cases, {
    ...(options.policy ? { base: options.policy } : {}),
    judge: options.judges !== undefined,
  });
  ensureContextPropagation();
  const agentName = options.agentName || agentNameOf(options.agent);

  const verdicts: Verdict[] = [];
  const byTrace = new Map<string, Verdict>();
  const processor = new ToolwatchSpanProcessor({
    policy,
    ...(options.judges ? { judges: options.judges } : {}),
    // A rollout out of the sample is reported as unscored, by its sampled_out record.
    sampledOutVerdicts: true,
    onVerdict: (v) => {
      verdicts.push(v);
      byTrace.set(`${v.trace_id}\u0000${v.rule}`, v);
    },
  });
  const counter = new RolloutSpanCounter();
  const provider = new BasicTracerProvider({
    spanProcessors: [processor, counter, ...(options.spanProcessors ?? [])],
  });
  if (options.registerGlobal) trace.setGlobalTracerProvider(provider);
  const tracer = provider.getTracer('toolwatch.rollouts');

  const jobs = cases.flatMap((c) => Array.from({ length: k }, (_, rollout) => ({ c, rollout })));
  const records: Array<Omit<RolloutRecord, 'passed' | 'agentSpans'>> = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const at = next++;
      const { c, rollout } = jobs[at]!;
      records[at] = await runOne(tracer, counter, options.agent, agentName, c, rollout, timeoutMs);
      options.onRollout?.(records[at]!);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, jobs.length) }, worker));
    // Judges and runs whose spans were still open when the rollout ended.
    await processor.forceFlush();
  } finally {
    // The caller's processors are flushed, not shut down: they may outlive the rollouts.
    await provider.forceFlush();
    await processor.shutdown();
  }

  const rollouts: RolloutRecord[] = records.map((r) => {
    const verdict = byTrace.get(`${r.traceId}\u0000${r.case}`);
    return {
      ...r,
      // Counted now: spans the agent left open end before the flush above.
      agentSpans: counter.agentSpans(r.traceId),
      ...(verdict ? { verdict } : {}),
      passed: r.error === undefined && verdict !== undefined && isJudged(verdict) && verdict.passed === true,
    };
  });
  const counts = cases.map((c) => {
    const mine = rollouts.filter((r) => r.case === c.id);
    // A verdict whose every result is skipped (out of the policy's sample, over a span limit)
    // judged nothing: counted as scored and passed, it made an unjudged grid saturated-pass.
    const scored = mine.filter(
      (r) => r.error !== undefined || (r.verdict !== undefined && isJudged(r.verdict)),
    );
    return {
      case: c.id,
      passed: scored.filter((r) => r.passed).length,
      scored: scored.length,
      errors: mine.filter((r) => r.error !== undefined).length,
    };
  });
  return {
    grid: buildGrid(k, counts, options.thresholds),
    rollouts,
    verdicts,
    policy,
    agent: agentName,
    gates: checkGates(verdicts, policy),
  };
}

/** A function's own name; `default` (an anonymous default export) and `` are no names. */
export function agentNameOf(agent: RolloutAgent): string {
  return agent.name && agent.name !== 'default' ? agent.name : 'agent';
}

async function runOne(
  tracer: Tracer,
  counter: RolloutSpanCounter,
  agent: RolloutAgent,
  agentName: string,
  c: EvalCase,
  rollout: number,
  timeoutMs: number,
): Promise<Omit<RolloutRecord, 'passed' | 'agentSpans'>> {
  const seed = seedOf(c.id, rollout);
  const started = performance.now();
  return tracer.startActiveSpan(
    `invoke_agent ${agentName}`,
    {
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': agentName,
        [ATTR_TOOLWATCH_CASE_ID]: c.id,
        [ATTR_TOOLWATCH_ROLLOUT_INDEX]: rollout,
        'gen_ai.input.messages': messages('user', c.input),
      },
    },
    async (span) => {
      counter.watch(span.spanContext().traceId);
      const controller = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      let answer: unknown;
      let error: string | undefined;
      try {
        answer = await Promise.race([
          Promise.resolve().then(() =>
            agent(c.input, {
              caseId: c.id,
              case: c,
              rollout,
              seed,
              context: c.context,
              tracer,
              signal: controller.signal,
            }),
          ),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => {
              controller.abort();
              reject(new Error(`timed out after ${timeoutMs} ms`));
            }, timeoutMs);
          }),
        ]);
        // The answer on the rollout span: what an llm_judge (answer_facts) reads as the run's output.
        if (answer !== undefined) span.setAttribute('gen_ai.output.messages', messages('assistant', answer));
      } catch (err) {
        error = err instanceof Error ? err.message : String(err);
        span.recordException(err instanceof Error ? err : new Error(error));
        span.setStatus({ code: SpanStatusCode.ERROR, message: error });
      } finally {
        clearTimeout(timer);
        span.end();
      }
      return {
        case: c.id,
        rollout,
        seed,
        traceId: span.spanContext().traceId,
        ...(error !== undefined ? { error } : {}),
        durationMs: performance.now() - started,
        ...(answer !== undefined ? { answer } : {}),
      };
    },
  );
}

/** GenAI semantic-convention messages: text becomes one text part; chat messages are kept. */
function messages(role: 'user' | 'assistant', value: unknown): string {
  if (Array.isArray(value)) {
    const json = jsonOf(value);
    if (json !== undefined) return json;
  }
  const content = typeof value === 'string' ? value : (jsonOf(value) ?? inspectOf(value));
  return JSON.stringify([{ role, parts: [{ type: 'text', content }] }]);
}

/**
 * An agent's answer is whatever its function returned: a framework's result object may hold
 * cycles, BigInts or throwing getters. That is no failure of the rollout (it was one, "Converting
 * circular structure to JSON"): the answer is shown as Node prints it instead.
 */
function jsonOf(value: unknown): string | undefined {
  try {
    return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  } catch {
    return undefined;
  }
}

function inspectOf(value: unknown): string {
  try {
    return inspect(value, { depth: 4, breakLength: Number.POSITIVE_INFINITY, maxStringLength: 100_000 });
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/** FNV-1a of `id#rollout`: stable across runs and machines. */
function seedOf(id: string, rollout: number): number {
  let h = 0x811c9dc5;
  for (const ch of `${id}#${rollout}`) {
    h ^= ch.codePointAt(0)!;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}
