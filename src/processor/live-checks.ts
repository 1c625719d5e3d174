import { diag } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { toolArgumentsOf, toolNameOf } from '../conventions/span-role.js';
import { cappedName } from '../emission/capped-name.js';
import type { ToolwatchMetrics } from '../emission/metrics.js';
import { runIdentity } from '../evaluation/match-rules.js';
import { type LiveAgent, LiveMisuseMonitor } from '../guard/live-misuse.js';
import type { LiveScope } from '../guard/live-scope.js';
import { runsInOrder } from '../reconstruction/run-tree.js';
import type { AgentRun, MisuseEvent, MisuseKind, Policy, ToolExecution } from '../types.js';
import type { ProblemLog } from './problem-log.js';
import { spanIdentity } from './run-builder.js';

/** Distinct (rule, kind, tool) misuses logged through `diag` at most. */
const MAX_LOGGED = 1000;

export interface LiveChecksOptions {
  policy: Policy;
  metrics: ToolwatchMetrics;
  problems: ProblemLog;
  onMisuse: ((misuse: MisuseEvent) => void) | undefined;
  /** Rules match on attributes: identities carry the resource's too. */
  withResource: boolean;
}

/**
 * The processor's side of live misuse: which open agents a tool span counts for (its own run
 * and every run it is a member of, through the held agent entries), and where a misuse goes
 * (the counter, `diag`, `onMisuse`). The checks themselves are `LiveMisuseMonitor`'s.
 */
export class LiveChecks {
  /** False when no rule has live limits: the processor then skips all live work. */
  readonly enabled: boolean;
  private readonly _monitor: LiveMisuseMonitor;
  /**
   * The (rule, kind, tool) triples already logged. A misbehaving agent repeats the same misuse
   * on every run: one line each would flood the application's log from its hot path. Bounded:
   * past `MAX_LOGGED` distinct triples, nothing more is logged.
   */
  private readonly _logged = new Map<string, Map<MisuseKind, Set<string>>>();
  private _loggedCount = 0;

  constructor(private readonly _options: LiveChecksOptions) {
    this._monitor = new LiveMisuseMonitor(_options.policy, (event) => this._report(event));
    this.enabled = this._monitor.enabled;
  }

  /** A tool span started below `nearest` (the agent entry above it). */
  toolStarted(traceId: string, nearest: LiveScope | undefined, span: ReadableSpan, spanId: string): void {
    if (nearest === undefined) return;
    const tool = toolNameOf(span.name, span.attributes);
    if (tool === undefined) return;
    for (let agent: LiveScope | undefined = nearest; agent !== undefined; agent = agent.agent) {
      if (!agent.open) continue;
      const live = this.liveOf(traceId, agent);
      if (live !== null) this._monitor.toolStarted(live, tool, spanId);
    }
  }

  /** A tool span ended below `nearest`: its arguments are final now. */
  toolEnded(traceId: string, nearest: LiveScope | undefined, span: ReadableSpan, spanId: string): void {
    if (nearest === undefined) return;
    const tool = toolNameOf(span.name, span.attributes);
    if (tool === undefined) return;
    const args = toolArgumentsOf(span.attributes);
    for (let agent: LiveScope | undefined = nearest; agent !== undefined; agent = agent.agent) {
      if (!agent.open) continue;
      const live = this.liveOf(traceId, agent);
      if (live !== null) this._monitor.toolEnded(live, tool, args, spanId);
    }
  }

  /**
   * Tool names were unknown while the run went on (every attribute came at span end), so the
   * live checks run now, on the rebuilt run, still before its verdict is delivered.
   */
  replay(run: AgentRun): void {
    if (!this.enabled) return;
    const agent = this._monitor.watch(runIdentity(run), run.traceId, run.spanId);
    if (agent === undefined) return;
    const executions: ToolExecution[] = [];
    for (const member of runsInOrder([run]))
      for (const execution of member.executions) executions.push(execution);
    executions.sort((a, b) => a.start - b.start);
    for (const execution of executions) {
      this._monitor.toolStarted(agent, execution.name, execution.spanId);
      this._monitor.toolEnded(agent, execution.name, execution.args ?? execution.argsRaw, execution.spanId);
    }
  }

  /**
   * The live counts of an open agent span (null: no rule with limits matches it), set up on its
   * first tool or guard check (its attributes are complete by then).
   */
  liveOf(traceId: string, agent: LiveScope): LiveAgent | null {
    if (agent.live === undefined) {
      // Agent entries keep their span (see `LiveScope.span`).
      const identity = spanIdentity(agent.span!, agent.agent !== undefined, this._options.withResource);
      agent.live = this._monitor.watch(identity, traceId, agent.spanId) ?? null;
    }
    return agent.live;
  }

  private _firstOfItsKind(event: MisuseEvent): boolean {
    if (this._loggedCount >= MAX_LOGGED) return false;
    let byKind = this._logged.get(event.rule);
    if (byKind === undefined) {
      byKind = new Map();
      this._logged.set(event.rule, byKind);
    }
    let tools = byKind.get(event.kind);
    if (tools === undefined) {
      tools = new Set();
      byKind.set(event.kind, tools);
    } else if (tools.has(cappedName(event.tool))) return false;
    tools.add(cappedName(event.tool));
    this._loggedCount++;
    return true;
  }

  private _report(event: MisuseEvent): void {
    this._options.metrics.recordMisuse(event.kind, event.tool, event.agent, event.rule);
    if (this._firstOfItsKind(event)) {
      diag.warn(
        `toolwatch: ${event.kind} tool call ${event.tool} by agent ${event.agent} (rule ${event.rule}); further ${event.kind} calls of this tool under this rule are counted in toolwatch.tool.misuse and delivered to onMisuse, not logged`,
      );
    }
    const onMisuse = this._options.onMisuse;
    if (onMisuse === undefined) return;
    try {
      onMisuse(event);
    } catch (error) {
      this._options.problems.report('on_misuse', 'onMisuse callback threw', error);
    }
  }
}
