/**
 * Public types of toolwatch. Internals live next to the code that uses them and are never
 * exported from `index.ts`.
 */

// ---------------------------------------------------------------------------------------
// Spans

/** OTel status code, as in `@opentelemetry/api` `SpanStatusCode`: 0 UNSET, 1 OK, 2 ERROR. */
export type StatusCode = 0 | 1 | 2;

export interface SpanEventLike {
  name: string;
  /** Epoch milliseconds (fractional). */
  time: number;
  attributes: Record<string, unknown>;
}

/**
 * The one span shape reconstruction reads. Built from an SDK `ReadableSpan`
 * (`fromReadableSpan`) or from OTLP/JSON (`spansFromOtlpJson`), so the processor, the CLI
 * and the gateway share every line after decoding.
 */
export interface SpanLike {
  traceId: string;
  spanId: string;
  /** Missing for roots; may point at a span that never arrives (orphans are tolerated). */
  parentSpanId?: string;
  name: string;
  /** OTel SpanKind number: 0 INTERNAL, 1 SERVER, 2 CLIENT, 3 PRODUCER, 4 CONSUMER. */
  kind: number;
  /** Epoch milliseconds (fractional, sub-microsecond precision). */
  startTime: number;
  /** Epoch milliseconds; undefined while the span is still open. */
  endTime?: number;
  status: { code: StatusCode; message?: string };
  /** Attribute values as the source gave them (strings, numbers, booleans, arrays, or structured values from OTLP kvlist). */
  attributes: Record<string, unknown>;
  events: SpanEventLike[];
  /** Resource attributes, when known. */
  resource?: Record<string, unknown>;
  scope?: { name: string; version?: string };
  droppedAttributesCount?: number;
}

// ---------------------------------------------------------------------------------------
// The model (docs/semantics.md)

export type ToolStatus = 'ok' | 'error' | 'refused' | 'paused';

/** Where an execution's `args` came from. */
export type ArgsSource = 'span' | 'request' | 'none';

/** A tool call that an LLM span of the run emitted in its output (this turn). */
export interface ToolRequest {
  name: string;
  callId?: string;
  args?: unknown;
  argsRaw?: string;
  argsError?: string;
  /** Span id of the LLM (or step) span whose output carried the call. */
  llmSpanId: string;
  /** Position of the call inside that LLM output, for order joins. */
  index: number;
  /** Epoch ms of the LLM span's end (its output exists then). */
  time: number;
  /** The execution it was joined to, if any. */
  execution?: ToolExecution;
  /** Set when the framework recorded why it never ran (unknown tool, invalid input, denial). */
  refusal?: string;
  /** True when the call awaits approval or external execution rather than being rejected. */
  pending?: boolean;
  /**
   * True when a person or an approval policy rejected the call at an approval step (agno's
   * rejected confirmation, an approval response with `approved: false`,
   * `gen_ai.tool.call.decision.outcome=deny`): agno keeps such a call as a `ToolExecution`
   * with `tool_call_error`, unlike a call refused before it could run (tool-call limit,
   * unknown tool, invalid arguments).
   */
  rejected?: boolean;
}

/**
 * One tool call of a run: an execution seen as a span, or a request-only call (the model
 * asked, nothing ran). Request-only calls have `requestOnly: true`, no `spanId` of their
 * own (`spanId` is the LLM span's), and status `refused` (or `paused` when pending).
 */
export interface ToolExecution {
  name: string;
  callId?: string;
  /**
   * Parsed arguments (object for nearly every tool); undefined when unreadable. In the span
   * processor, also undefined (with `argsRaw` and `result`) for tools whose arguments no
   * scorer of the policy reads: built-in scorers say which they read, and a policy with a
   * custom scorer or an LLM judge has every value read.
   */
  args?: unknown;
  /** The raw argument text when it could not be parsed (or was truncated). */
  argsRaw?: string;
  argsError?: string;
  argsSource: ArgsSource;
  result?: unknown;
  status: ToolStatus;
  errorType?: string;
  errorMessage?: string;
  /** Always false for calls that count; history lives in `AgentRun.history`. */
  fromHistory: false;
  requestOnly: boolean;
  spanId: string;
  /** Epoch ms. */
  start: number;
  end?: number;
  /** The run the call belongs to. */
  run: AgentRun;
  /** The LLM request it was joined to. */
  request?: ToolRequest;
  /** Which convention adapter read it (e.g. `gen_ai`, `openinference`, `ai_sdk`, `mastra`, `traceloop`). */
  convention: string;
}

/** A tool call replayed from earlier turns: kept for reports, never counted. */
export interface HistoryCall {
  name: string;
  callId?: string;
  args?: unknown;
  /** The span whose input (or flag) showed it. */
  spanId: string;
  /** How it was recognised as history. */
  reason: 'flag' | 'input_messages' | 'new_message_index' | 'agent_input' | 'part_flag';
}

export interface ToolDefinition {
  name: string;
  description?: string;
  parameters?: unknown;
}

export interface AgentRun {
  agent: string;
  agentId?: string;
  traceId: string;
  /** The agent span (or, for implicit runs, the outermost span containing the tool spans). */
  spanId: string;
  /** True when no agent-kind span exists and the run was inferred (LangGraph, Traceloop). */
  implicit: boolean;
  parent?: AgentRun;
  /** Nested runs in start order (team members, agents-as-tools, handoff targets). */
  children: AgentRun[];
  /** Tool executions seen as spans, in order (start, end, span id). */
  executions: ToolExecution[];
  /** Tool calls the run's LLM spans asked for this turn. */
  requests: ToolRequest[];
  /** Executions plus request-only calls, merged in time order. */
  calls: ToolExecution[];
  history: HistoryCall[];
  input?: unknown;
  output?: unknown;
  toolDefinitions?: ToolDefinition[];
  /** Epoch ms. */
  start: number;
  end?: number;
  status: StatusCode;
  /** Attributes of the run span plus resource attributes (for `match.attributes`). */
  attributes: Record<string, unknown>;
  /** True when any span owned by this run (or nested runs) has status ERROR. */
  hasErrorSpan: boolean;
}

/** Something reconstruction could not read; recorded, never thrown. */
export interface Problem {
  code: string;
  message: string;
  traceId?: string;
  spanId?: string;
}

export interface ReconstructedTrace {
  traceId: string;
  /** Outermost runs, in start order; nested runs hang under `children`. */
  runs: AgentRun[];
  problems: Problem[];
}

// ---------------------------------------------------------------------------------------
// Scoring (docs/semantics.md)

export type ResultLabel = 'pass' | 'fail' | 'error' | 'skipped';

export interface ScorerResult {
  scorer: string;
  kind: string;
  passed: boolean;
  /** In [0, 1]. */
  score: number;
  label: ResultLabel;
  reason: string | null;
  /** sha256 of the scorer's canonical config. */
  digest: string;
  detail: Record<string, unknown>;
}

/** A judge: given a prompt, returns the model's raw reply text. Called with temperature 0. */
export type JudgeFunction = (request: JudgeRequest) => Promise<string> | string;

export interface JudgeRequest {
  system: string;
  prompt: string;
  temperature: 0;
  signal?: AbortSignal;
}

export interface ScoreContext {
  /** Judges by name (`default` is used when a scorer names none). */
  judges?: Record<string, JudgeFunction | unknown>;
  /** Applied to every value sent to a judge or emitted as an explanation. */
  redact?: RedactOptions;
  signal?: AbortSignal;
}

/**
 * A scorer judges one run. Deterministic scorers return synchronously; judges return a
 * promise. A scorer reports failure as data: exceptions become `error` results.
 */
export interface Scorer {
  /** Result name; defaults to the kind. */
  readonly name: string;
  readonly kind: string;
  /** sha256 of the canonical config. */
  readonly digest: string;
  /** True for scorers that return promises (LLM judges): run off the hot path, under budgets. */
  readonly async: boolean;
  /** Per-scorer sampling; deterministic scorers default to 1.0, judges to 0. */
  readonly sampling?: { ratio: number };
  /** Canonical config, snake_case as in the policy file. */
  readonly config: Record<string, unknown>;
  /** Tags carried into reports (`risk`, `intent`). */
  readonly tags?: { risk?: 'low' | 'medium' | 'high' | 'critical'; intent?: string };
  /**
   * Which tools' arguments the scorer reads: a set of tool names, or `'all'` (every call's
   * arguments, no result). The processor leaves the other values of a run unparsed. Default
   * (undefined): the scorer may read every call's arguments and results.
   */
  readonly argumentsRead?: ArgumentsRead;
  score(run: AgentRun, context?: ScoreContext): ScorerResult | Promise<ScorerResult>;
}

/** Which tools' arguments a scorer reads (`Scorer.argumentsRead`): tool names, or `'all'`. */
export type ArgumentsRead = ReadonlySet<string> | 'all';

/** A deterministic scorer: `score` returns its result synchronously. */
export interface SyncScorer extends Scorer {
  readonly async: false;
  score(run: AgentRun, context?: ScoreContext): ScorerResult;
}

// ---------------------------------------------------------------------------------------
// Policy (docs/policy.md)

export interface RedactOptions {
  /** When true, explanations and judge prompts carry keys, not values. Default true. */
  values: boolean;
  /**
   * A last pass over every text sent to a judge (system and user prompt, retries included),
   * e.g. to mask e-mail addresses in the user's request. Code only: policy files cannot hold
   * functions; set it with `definePolicy({ redact: { prompt } })` or on a loaded policy's
   * `redact`. If it throws, the judge is not called and the result is `error`. Default: none.
   */
  prompt?: (text: string) => string;
}

export interface RuleMatch {
  /** Glob on the agent name; undefined = any agent. */
  agent?: string;
  /** Only outermost agent runs. Default true. */
  rootOnly: boolean;
  /** Exact matches on run-span or resource attributes. */
  attributes?: Record<string, string | number | boolean>;
}

export interface Rule {
  name: string;
  match: RuleMatch;
  scorers: Scorer[];
  /** How `checkToolCall` applies the rule before a tool runs. Default none: its decisions never block. */
  guard?: RuleGuard;
}

/** What the guard checks before a tool runs, each from the rule's `trajectory` scorers. */
export type GuardCheck = 'forbidden' | 'unexpected' | 'call_budget' | 'repeated_call' | 'arguments';

/** `enforce` refuses what the rule denies; `observe` records it as "would deny" and lets the call run. */
export type GuardMode = 'enforce' | 'observe';

/** A rule's `guard` key (the same in the policy file and in `definePolicy`). */
export interface RuleGuard {
  /** Default `enforce`. */
  mode: GuardMode;
  /** Default all five, in this order: forbidden, unexpected, call_budget, repeated_call, arguments. */
  checks: readonly GuardCheck[];
}

export interface JudgeBudget {
  maxPerMinute: number;
  maxConcurrent: number;
  escalateOn: Array<'failure' | 'error_span'>;
}

export type Gate =
  | { min: number }
  | { max: number }
  | { max_ratio: number }
  | { max_drop: number }
  /** `pass_rate` with a minimum per rule (by rule name) besides the overall one. */
  | { min: number; rules: Record<string, number> };

export interface Policy {
  version: 1;
  sampling: { ratio: number };
  judge: JudgeBudget;
  redact: RedactOptions;
  rules: Rule[];
  gates: Record<string, Gate>;
  /** sha256 of the canonical policy. */
  digest: string;
}

// ---------------------------------------------------------------------------------------
// Verdicts and misuse (docs/metrics.md)

/**
 * One run's verdict under one rule. snake_case on purpose: this is the wire format shared by
 * `onVerdict`, `evaluateTraces`, `toolwatch score --format json` and the gateway, the same
 * keys as the span attributes and the policy file.
 */
export interface Verdict {
  trace_id: string;
  span_id: string;
  agent: string;
  rule: string;
  /**
   * `true`: some scorer judged the run and every scorer that ran passed. `false`: a scorer
   * failed or errored. `null`: no scorer judged the run (every result `skipped`: out of the
   * sample, an incomplete trace, a judge over budget alone) — neither a pass nor a failure.
   */
  passed: boolean | null;
  policy_digest: string;
  sampled: boolean;
  results: ScorerResult[];
}

/** `arguments` comes from the guard only: the live checks do not check arguments. */
export type MisuseKind = 'forbidden' | 'unexpected' | 'call_budget' | 'repeated_call' | 'arguments';

export interface MisuseEvent {
  kind: MisuseKind;
  tool: string;
  agent: string;
  rule: string;
  trace_id: string;
  span_id: string;
  /** Epoch ms when toolwatch saw it. */
  time: number;
  detail: Record<string, unknown>;
  /**
   * Set on the guard's decisions (`checkToolCall`): true when the call was refused, false when
   * the rule only observes ("would deny"). Absent on the live checks' reports of calls already made.
   */
  blocked?: boolean;
}

// ---------------------------------------------------------------------------------------
// Guard (checkToolCall)

/** A tool call about to run. */
export interface ToolCall {
  tool: string;
  /** The arguments as an object, or as JSON text. Default none. */
  arguments?: unknown;
  /**
   * The agent making the call, when the context's innermost agent run is not it (a nested
   * agent whose span is not the active one). Default: the innermost agent run in the context.
   */
  agent?: string;
}

/**
 * The guard's answer (the gateway's JSON has the same keys). `decision` is what the policy
 * says; `allowed` is false only where a rule enforces it (`enforced`).
 */
export interface ToolCallDecision {
  allowed: boolean;
  decision: 'allow' | 'deny';
  enforced: boolean;
  /** Why, in words the model can act on; empty for an allow. */
  reasons: readonly string[];
  /** The rule that denied it (the enforcing one, when any). */
  rule?: string;
  kind?: GuardCheck;
}
