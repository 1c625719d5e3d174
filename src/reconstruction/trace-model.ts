import type { Classification } from '../conventions/classify.js';
import type {
  AgentFacts,
  ConventionAdapter,
  LlmFacts,
  MessageCall,
  RefusalFacts,
  SpanRole,
  ToolFacts,
} from '../conventions/span-facts.js';
import type {
  AgentRun,
  HistoryCall,
  Problem,
  SpanLike,
  ToolDefinition,
  ToolExecution,
  ToolRequest,
} from '../types.js';
import { canonicalArgs } from './canonical-args.js';

/**
 * What the phases of reconstruction share: the span nodes, the per-run working state, the
 * problem log and the small ordering helpers.
 */
export const NO_REFUSALS: readonly RefusalFacts[] = [];
/** What phase 4 reads from one span, when it was read ahead of reconstruction. */
export interface SpanReading {
  classification: Classification;
  tool?: ToolFacts | undefined;
  llm?: LlmFacts | undefined;
  agent?: AgentFacts | undefined;
}

export interface Node {
  span: SpanLike;
  /** What was read from the span ahead of reconstruction, if anything. */
  reading: SpanReading | undefined;
  id: string;
  parent: number;
  /** Undefined for leaves (most spans), to keep large traces light. */
  children: number[] | undefined;
  start: number;
  end: number | undefined;
  role: SpanRole;
  adapter: ConventionAdapter | undefined;
  agent?: AgentFacts | undefined;
  /** Facts of tool and LLM spans (output side), dropped once their run has taken them. */
  tool?: ToolFacts | undefined;
  llm?: LlmFacts | undefined;
  /** A tool span's call id (for ranks). */
  callId?: string | undefined;
  /** An LLM span asks for tool calls. */
  hasRequests?: boolean;
  /**
   * Causal position for spans that start in the same millisecond (OTel JS starts spans at
   * `Date.now()`): an LLM span ranks by how many tool calls its input already holds, a tool
   * span just after the LLM span that requested its call id. NaN when unknown.
   */
  rank: number;
}
export interface PendingRequest {
  request: ToolRequest;
  llmStart: number;
  llmRank: number;
  convention: string;
  usable: boolean;
  /**
   * Carried into a continued run (agno `continue_run`) from the paused run that asked for it:
   * an error result for it there is the person's rejection at the approval step.
   */
  continued?: boolean;
}
/** Per-run working state while the trace is read. */
export interface RunState {
  run: AgentRun;
  node: number;
  facts: AgentFacts | undefined;
  executions: ToolExecution[];
  /** The tool span of each execution, parallel to `executions` (for same-millisecond ordering). */
  execNodes: Node[];
  /** Executions whose span arguments are missing, redacted or not an object. */
  unusable: Set<ToolExecution>;
  /** Executions whose values were left unread, each followed by its facts (see `settleExecutions`). */
  unread: Array<ToolExecution | ToolFacts>;
  /** Call ids of `executions[0 .. executedCount)`, built when first asked (see assign-runs). */
  executedIds: Set<string>;
  executedCount: number;
  aliases: Map<ToolExecution, string[]>;
  requests: PendingRequest[];
  requestIds: Set<string>;
  hints: Array<MessageCall & { spanId: string }>;
  inputCalls: Array<MessageCall & { spanId: string }>;
  refusals: RefusalFacts[];
  history: HistoryCall[];
  ownError: boolean;
  /** Span id of the last LLM span of the run, in span order. */
  lastLlm: Node | undefined;
  llmDefinitions: ToolDefinition[] | undefined;
}
/** The problems of one trace: a class rather than a closure, built once per reconstruction. */
export class ProblemLog {
  readonly problems: Problem[] = [];
  constructor(private readonly _traceId: string) {}

  add(code: string, message: string, spanId?: string): void {
    const p: Problem = { code, message };
    if (this._traceId) p.traceId = this._traceId;
    if (spanId) p.spanId = spanId;
    this.problems.push(p);
  }
}
export function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
export function callKey(name: string, args: unknown): string {
  return name + '\u0000' + canonicalArgs(args);
}
export function compareSpans(a: Node, b: Node): number {
  if (a.start !== b.start) return a.start - b.start;
  if (a.rank !== b.rank && !Number.isNaN(a.rank) && !Number.isNaN(b.rank)) return a.rank - b.rank;
  const ae = a.end ?? Number.POSITIVE_INFINITY;
  const be = b.end ?? Number.POSITIVE_INFINITY;
  if (ae !== be) return ae < be ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
/** Sorts node indexes in span order; the comparator closure is built only when they are out of order. */
export function sortIndexesIfNeeded(list: number[], nodes: Node[]): void {
  for (let i = 1; i < list.length; i++) {
    if (compareSpans(nodes[list[i - 1]!]!, nodes[list[i]!]!) > 0) {
      list.sort((a, b) => compareSpans(nodes[a]!, nodes[b]!));
      return;
    }
  }
}
export function byRunStart(a: AgentRun, b: AgentRun): number {
  if (a.start !== b.start) return a.start - b.start;
  return a.spanId < b.spanId ? -1 : a.spanId > b.spanId ? 1 : 0;
}
/** Spans mostly arrive in start order: check in linear time before paying for a sort. */
export function sortIfNeeded<T>(list: T[], compare: (a: T, b: T) => number): void {
  for (let i = 1; i < list.length; i++) {
    if (compare(list[i - 1]!, list[i]!) > 0) {
      list.sort(compare);
      return;
    }
  }
}
/**
 * Scratch arrays, reused from one call to the next (reconstruction is synchronous and never
 * re-entered): a typed array costs a backing-store allocation, and a trace needs eleven.
 * Traces above `POOL_LIMIT` spans get their own, so a huge trace does not pin its memory.
 */
const POOL_LIMIT = 4096;
const U8_POOL: Uint8Array[] = [];
const I32_POOL: Int32Array[] = [];
export function u8(slot: number, n: number): Uint8Array {
  if (n > POOL_LIMIT) return new Uint8Array(n);
  let array = U8_POOL[slot];
  if (array === undefined || array.length < n) {
    array = new Uint8Array(Math.max(n, 64));
    U8_POOL[slot] = array;
  } else {
    clear(array, 0, n);
  }
  return array;
}
export function i32(slot: number, n: number, value: number): Int32Array {
  if (n > POOL_LIMIT) return value === 0 ? new Int32Array(n) : new Int32Array(n).fill(value);
  let array = I32_POOL[slot];
  if (array === undefined || array.length < n) {
    array = new Int32Array(Math.max(n, 64));
    I32_POOL[slot] = array;
  }
  clear(array, value, n);
  return array;
}
/** `array.fill(value, 0, n)`; a loop for small traces, where the builtin's call costs more than the stores. */
function clear(array: Uint8Array | Int32Array, value: number, n: number): void {
  if (n > 64) array.fill(value, 0, n);
  else for (let i = 0; i < n; i++) array[i] = value;
}
