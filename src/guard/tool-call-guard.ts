import { type Context, type Span, SpanKind, type TracerProvider, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { SpanRole, spanRole, toolNameOf } from '../conventions/span-role.js';
import type { GuardOutcome, ToolwatchMetrics } from '../emission/metrics.js';
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_NAME,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
} from '../semconv.js';
import type { MisuseEvent, Policy, ToolCall, ToolCallDecision } from '../types.js';
import { ALLOW, type CallsSoFar, decideToolCall } from './decide-tool-call.js';
import { DECISION_EVENT, decisionAttributes, decisionEventAttributes } from './decision-attributes.js';
import { type GuardRule, GuardRules } from './guard-rules.js';
import type { LiveAgent } from './live-misuse.js';
import { callsOf, repeatsOf } from './live-misuse.js';
import type { LiveRunsAt } from './live-scope.js';

/** What the guard does when it fails (a bug, or a call it cannot read). */
export type GuardFailure = 'allow' | 'deny';

export interface ToolCallGuardOptions {
  policy: Policy;
  /** The open runs of a span, from the processor's live state. */
  runsAt: (span: ReadableSpan) => LiveRunsAt | undefined;
  metrics: ToolwatchMetrics;
  problem: (kind: string, message: string, error?: unknown) => void;
  onMisuse: ((misuse: MisuseEvent) => void) | undefined;
  tracerProvider: TracerProvider | undefined;
  failure: GuardFailure;
}

/** The tracer of the guard's own spans (calls refused before any span of theirs existed). */
const TRACER_NAME = 'toolwatch';

/**
 * `checkToolCall` behind the processor: finds the runs of the context in the live state,
 * decides with `decideToolCall`, and records a denial where the trace will show it (on the
 * tool's span, or on a refused-call span of its own), in the counter and through `onMisuse`.
 * Never throws: a failure is counted and answered with the `failure` decision.
 */
export class ToolCallGuard {
  private readonly _rules: GuardRules;
  /** Each live run's rules, found once per run (live agents are made once per agent span). */
  private readonly _rulesOf = new WeakMap<LiveAgent, GuardRule[]>();
  private readonly _soFar = new LiveCallsSoFar();
  private readonly _failed: ToolCallDecision;

  constructor(private readonly _options: ToolCallGuardOptions) {
    this._rules = new GuardRules(_options.policy);
    const reasons = Object.freeze(['the toolwatch guard failed; see the application log']);
    this._failed = Object.freeze(
      _options.failure === 'deny'
        ? { allowed: false, decision: 'deny' as const, enforced: true, reasons }
        : { allowed: true, decision: 'allow' as const, enforced: false, reasons },
    );
  }

  check(call: ToolCall, context: Context): ToolCallDecision {
    try {
      return this._check(call, context);
    } catch (error) {
      this._options.problem('guard', 'checkToolCall failed', error);
      this._options.metrics.recordGuardDecision('error', '', toolOf(call), '', '');
      return this._failed;
    }
  }

  private _check(call: ToolCall, context: Context): ToolCallDecision {
    if (call === null || typeof call !== 'object' || typeof call.tool !== 'string' || call.tool === '') {
      throw new TypeError('checkToolCall needs a call { tool: string, arguments?, agent? }');
    }
    const active = trace.getSpan(context) as (Span & ReadableSpan) | undefined;
    const runs = this._rules.enabled && active !== undefined ? this._options.runsAt(active) : undefined;
    if (runs === undefined) {
      this._options.metrics.recordGuardDecision('allow', '', call.tool, '', '');
      return ALLOW;
    }
    let decision: ToolCallDecision = ALLOW;
    let decidedBy: LiveAgent | undefined;
    const soFar = this._soFar;
    let from = 0;
    if (call.agent !== undefined) {
      from = runs.agents.findIndex((agent) => agent.agent === call.agent);
      if (from < 0) {
        this._options.metrics.recordGuardDecision('allow', '', call.tool, call.agent, '');
        return ALLOW;
      }
    }
    for (let i = from; i < runs.agents.length; i++) {
      const agent = runs.agents[i]!;
      soFar.reset(agent, runs.toolSpanId);
      const next = decideToolCall(this._rulesFor(agent), soFar, call, this._rules.redact);
      if (stronger(next, decision)) {
        decision = next;
        decidedBy = agent;
      }
    }
    const agentName = (decidedBy ?? runs.agents[from]!).agent;
    const outcome: GuardOutcome =
      decision.decision === 'allow' ? 'allow' : decision.enforced ? 'deny' : 'would_deny';
    this._options.metrics.recordGuardDecision(
      outcome,
      decision.kind ?? '',
      call.tool,
      agentName,
      decision.rule ?? '',
    );
    if (decision.decision === 'deny') this._record(decision, call, agentName, active!, runs, context);
    return decision;
  }

  private _rulesFor(agent: LiveAgent): GuardRule[] {
    let rules = this._rulesOf.get(agent);
    if (rules === undefined) {
      rules = [];
      for (const limits of agent.limits) {
        const rule = this._rules.byName(limits.rule);
        if (rule !== undefined) rules.push(rule);
      }
      this._rulesOf.set(agent, rules);
    }
    return rules;
  }

  /**
   * A denial in the trace: on the tool's own span when the guard runs inside it (the framework
   * opened it before running the tool), else, for a refused call, on an `execute_tool` span of
   * its own, which reconstruction reads as the refused call; a denial only observed before the
   * tool's span exists is an event on the active span (the tool's span will show the call).
   */
  private _record(
    decision: ToolCallDecision,
    call: ToolCall,
    agent: string,
    active: Span & ReadableSpan,
    runs: LiveRunsAt,
    context: Context,
  ): void {
    const eventAttributes = decisionEventAttributes(decision, call.tool);
    let spanId: string;
    if (runs.toolSpanId !== undefined && sameTool(active, call.tool)) {
      active.setAttributes(decisionAttributes(decision));
      active.addEvent(DECISION_EVENT, eventAttributes);
      spanId = runs.toolSpanId;
    } else if (!decision.allowed) {
      const tracer = (this._options.tracerProvider ?? trace.getTracerProvider()).getTracer(TRACER_NAME);
      const span = tracer.startSpan(
        `${GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL} ${call.tool}`,
        {
          kind: SpanKind.INTERNAL,
          attributes: {
            [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
            [ATTR_GEN_AI_TOOL_NAME]: call.tool,
            ...argumentsAttribute(call.arguments),
            ...decisionAttributes(decision),
          },
        },
        context,
      );
      span.addEvent(DECISION_EVENT, eventAttributes);
      span.end();
      spanId = span.spanContext().spanId;
    } else {
      active.addEvent(DECISION_EVENT, { ...eventAttributes, ...decisionAttributes(decision) });
      spanId = active.spanContext().spanId;
    }
    this._misuse(decision, call, agent, active.spanContext().traceId, spanId);
  }

  private _misuse(
    decision: ToolCallDecision,
    call: ToolCall,
    agent: string,
    traceId: string,
    spanId: string,
  ): void {
    const onMisuse = this._options.onMisuse;
    if (onMisuse === undefined) return;
    try {
      onMisuse({
        kind: decision.kind!,
        tool: call.tool,
        agent,
        rule: decision.rule!,
        trace_id: traceId,
        span_id: spanId,
        time: Date.now(),
        detail: { reasons: [...decision.reasons], enforced: decision.enforced },
        blocked: !decision.allowed,
      });
    } catch (error) {
      this._options.problem('on_misuse', 'onMisuse callback threw', error);
    }
  }
}

/** A live run's calls so far, as the decision reads them; one instance, reset per run (no allocation per call). */
class LiveCallsSoFar implements CallsSoFar {
  calls = 0;
  private _agent: LiveAgent | undefined;

  reset(agent: LiveAgent, toolSpanId: string | undefined): void {
    this._agent = agent;
    // The tool span the guard runs inside is this very call: not one of the calls so far.
    this.calls = callsOf(agent, toolSpanId);
  }

  repeatsOf(tool: string, args: unknown): number {
    return repeatsOf(this._agent!, tool, args);
  }
}

/** Refused beats observed, a denial beats an allow; the first of equals wins (innermost run). */
function stronger(next: ToolCallDecision, current: ToolCallDecision): boolean {
  if (next.decision === 'allow') return false;
  if (current.decision === 'allow') return true;
  return next.enforced && !current.enforced;
}

/** Whether the active tool span is this call's (a span whose tool name is not known yet is taken to be). */
function sameTool(span: ReadableSpan, tool: string): boolean {
  if (spanRole(span.name, span.attributes) !== SpanRole.TOOL) return true;
  const name = toolNameOf(span.name, span.attributes);
  return name === undefined || name === tool;
}

function argumentsAttribute(args: unknown): Record<string, string> {
  if (args === undefined) return {};
  if (typeof args === 'string') return { [ATTR_GEN_AI_TOOL_CALL_ARGUMENTS]: args };
  try {
    const text = JSON.stringify(args);
    return text === undefined ? {} : { [ATTR_GEN_AI_TOOL_CALL_ARGUMENTS]: text };
  } catch {
    return {};
  }
}

function toolOf(call: unknown): string {
  const tool = call !== null && typeof call === 'object' ? (call as { tool?: unknown }).tool : undefined;
  return typeof tool === 'string' ? tool : '';
}
