import type { HistoryCall, SpanLike, ToolDefinition, ToolExecution, ToolStatus } from '../types.js';

/** What a span is for reconstruction. `other` spans only carry structure. */
export type SpanRole = 'agent' | 'tool' | 'llm' | 'other';

/**
 * A tool span's arguments and result as the span carried them, not parsed yet. Parsing them
 * is most of what reading a tool span costs, and most scorers read neither (names, order,
 * counts): the processor reads arguments only for the tools whose arguments a scorer of its
 * policy reads, or when reconstruction itself needs them (joins to model requests, history),
 * and results never (only LLM judges and custom scorers read them, and with those nothing is
 * left unread).
 */
export interface UnreadToolValues {
  args: unknown;
  result: unknown;
}

/** Arguments as read from a span or a message part. */
export interface ArgsFacts {
  args?: unknown;
  /** The raw text when it could not be parsed. */
  argsRaw?: string;
  argsError?: string;
  /**
   * False when the value is missing, redacted (`__REDACTED__`), unparseable or not an
   * object: reconstruction then prefers the joined request's arguments.
   */
  usable: boolean;
}

/** A tool execution read from one tool span. */
export interface ToolFacts extends ArgsFacts {
  convention: string;
  name: string;
  callId?: string;
  result?: unknown;
  status: ToolStatus;
  errorType?: string;
  errorMessage?: string;
  /** Other names the model may have used for this tool (OpenAI Agents handoffs). */
  aliases?: string[];
  /**
   * The framework opened a span but rejected the call before the tool ran (invalid
   * arguments): reconstruction counts the request as request-only, with this span's
   * message as the refusal.
   */
  notRun?: boolean;
  /** A guard refused the call (`toolwatch.guard.*`): it counts as a refused call even with no model request recorded. */
  guardRefused?: boolean;
  /**
   * Arguments and result left unread (`deferValues`): `usable` is provisional, and `args`,
   * `argsRaw`, `argsError` and `result` are set once `settleToolValues` reads them.
   */
  unread?: UnreadToolValues | undefined;
}

/** A tool call found in a message (an LLM output, an input history, a step output). */
export interface MessageCall extends ArgsFacts {
  name: string;
  callId?: string;
  /** The message or part said `from_history: true`. */
  fromHistory?: boolean;
  /** The framework marked the call as awaiting approval or external execution. */
  pending?: boolean;
}

/** Why a requested call never ran, as a later tool result or decision told it. */
export interface RefusalFacts {
  callId?: string;
  name?: string;
  text: string;
  /** True for approval-pending decisions rather than rejections. */
  pending?: boolean;
  /**
   * A person or an approval policy said no at an approval step (decision `deny`, an approval
   * response with `approved: false`, a denied tool output): the framework keeps the call as
   * an execution that failed, unlike a call refused before it could run.
   */
  rejected?: boolean;
  /** The framework marked the tool result as an error (agno `tool_call_error`). */
  error?: boolean;
  /**
   * Refusals read from a tool span a guard refused (`ToolFacts.guardRefused`): the call as that
   * span shows it, counted as a refused request-only call when no model request stands for it
   * (the model's output was not recorded).
   */
  notRunCall?: ToolExecution;
}

/** What one LLM (or step/chunk) span says about tool calls. */
export interface LlmFacts {
  convention: string;
  /** Tool calls this span's output asked for: this turn's requests. */
  requests: MessageCall[];
  /** Calls seen in side outputs (Mastra chunks): they lend call ids, never count as requests. */
  hints?: MessageCall[];
  /** Tool calls in the input messages: history candidates. */
  inputCalls?: MessageCall[];
  refusals?: RefusalFacts[];
  toolDefinitions?: ToolDefinition[];
  /**
   * How much conversation the span's input already holds (its size, in the adapter's own
   * unit): later model calls of a run hold more. Orders LLM spans that start in the same
   * millisecond.
   */
  progress?: number;
}

/** What an LLM span's input says: history candidates and results that explain refusals. */
export interface LlmInputFacts {
  inputCalls: MessageCall[];
  refusals: RefusalFacts[];
}

/** An agent span. */
export interface AgentFacts {
  convention: string;
  name: string;
  agentId?: string;
  /** OpenInference `graph.node.id`. */
  nodeId?: string;
  /** OpenInference `graph.node.parent_id`: the source of a handoff or the enclosing team. */
  parentNodeId?: string;
  /**
   * OpenInference AGENT span without a graph node id: maybe the OpenAI Agents bridge's
   * synthetic trace root, which reconstruction treats as a wrapper, not a run.
   */
  wrapperCandidate?: boolean;
  /**
   * The span resumes a paused run (agno `continue_run`): the calls pending in its first
   * model input are this run's requests, not history.
   */
  continuation?: boolean;
  input?: unknown;
  output?: unknown;
  toolDefinitions?: ToolDefinition[];
  /** Calls the agent span itself shows as history (caller input, Pydantic prefix, flagged parts). */
  history?: Array<Omit<HistoryCall, 'spanId'>>;
  refusals?: RefusalFacts[];
}

/** One convention: recognises spans and reads them. Every method is pure and never throws. */
export interface ConventionAdapter {
  readonly name: string;
  /** The span's role, or undefined when the span is not of this convention. */
  role(span: SpanLike): SpanRole | undefined;
  tool(span: SpanLike): ToolFacts | undefined;
  agent(span: SpanLike): AgentFacts | undefined;
  /** Everything an LLM span says: `llmOutput` and `llmInput` together. */
  llm(span: SpanLike): LlmFacts | undefined;
  /**
   * The output side only (requests, hints, tool definitions, decisions, `progress`): cheap,
   * read for every LLM span up front. Reconstruction reads the input side later, one span
   * at a time, so that long conversations are never all parsed at once.
   */
  llmOutput(span: SpanLike): LlmFacts | undefined;
  llmInput(span: SpanLike): LlmInputFacts;
  /**
   * The same readers for a span this adapter has already claimed with that role (through
   * `role`), without asking the role again; they may throw. Reconstruction classifies each
   * span once and then reads it through these when the adapter has them.
   */
  readonly claimed?: ClaimedReaders;
}

/** Readers of a span whose role the adapter has already given (see `ConventionAdapter.claimed`). */
export interface ClaimedReaders {
  /** With `deferValues`, an adapter may leave arguments and result unread (`ToolFacts.unread`). */
  tool(span: SpanLike, deferValues?: boolean): ToolFacts | undefined;
  /**
   * With `deferValues`, the agent's own input and output (`AgentFacts.input`, `output`) are
   * left unread: no scorer of the policy reads them (`AgentRun.input`, `output`).
   */
  agent(span: SpanLike, deferValues?: boolean): AgentFacts | undefined;
  /**
   * `agent(span)?.name` without the rest of `agent`: rule matching asks it of every agent span,
   * sampled or not, and must not parse the span's messages to learn a name.
   */
  agentName(span: SpanLike): string;
  llmOutput(span: SpanLike): LlmFacts | undefined;
  llmInput(span: SpanLike): LlmInputFacts;
  /**
   * True only when `llmOutput` would find no requests, hints, refusals or tool definitions and
   * `llmInput` nothing: a model span recorded without content (the OTel GenAI
   * instrumentations' default), checked by the presence of what those readers read, nothing
   * parsed. Adapters without it have no such spans as far as the processor knows.
   */
  llmSaysNothing?(span: SpanLike): boolean;
}
