import { classifySpan } from '../conventions/classify.js';
import type { SpanLike } from '../types.js';
import type { SpanReading } from './trace-model.js';
import { i32, type Node, ProblemLog, u8 } from './trace-model.js';

/** The spans of one trace as nodes: normalised, linked to their parents, cycles broken. */
export interface IndexedSpans {
  traceId: string;
  log: ProblemLog;
  nodes: Node[];
}

/**
 * Phases 1-3 of reconstruction: index the spans (normalising what a careless sender may get
 * wrong), link parents (orphans become roots) and break parent cycles.
 */
export function indexSpans(
  spans: SpanLike[],
  readings?: ReadonlyArray<SpanReading | undefined>,
): IndexedSpans {
  const list: unknown[] = Array.isArray(spans) ? spans : [];
  let traceId = '';
  for (const s of list) {
    const t = (s as SpanLike | null)?.traceId;
    if (typeof t === 'string' && t) {
      traceId = t;
      break;
    }
  }
  const log = new ProblemLog(traceId);

  // 1. Index spans; normalise what a careless sender may get wrong.
  const nodes: Node[] = [];
  // Small traces (a judged run is ~10 spans) find ids by a scan: cheaper than hashing into a map that grows.
  const byId = list.length > SCAN_LIMIT ? new Map<string, number>() : undefined;
  let mixedReported = false;
  for (let i = 0; i < list.length; i++) {
    const span = normalise(list[i], i, log);
    if (!span) continue;
    if (span.traceId !== traceId && !mixedReported) {
      mixedReported = true;
      log.add(
        'mixed_trace',
        `spans of trace ${span.traceId || '(none)'} were passed with trace ${traceId}`,
        span.spanId,
      );
    }
    if (byId !== undefined ? byId.has(span.spanId) : indexOf(nodes, span.spanId) !== -1) {
      log.add(
        'duplicate_span_id',
        `span id ${span.spanId} appears more than once; the first span is kept`,
        span.spanId,
      );
      continue;
    }
    const reading = readings?.[i];
    const { role, adapter } = reading?.classification ?? classifySpan(span);
    byId?.set(span.spanId, nodes.length);
    // Every field in the literal: nodes keep one shape through the phases that add facts.
    nodes.push({
      span,
      reading,
      id: span.spanId,
      parent: -1,
      children: undefined,
      start: span.startTime,
      end: span.endTime,
      role,
      adapter,
      agent: undefined,
      tool: undefined,
      llm: undefined,
      callId: undefined,
      hasRequests: false,
      rank: Number.NaN,
    });
  }
  const n = nodes.length;

  // 2. Parent links: orphans become roots.
  for (let i = 0; i < n; i++) {
    const node = nodes[i]!;
    const pid = node.span.parentSpanId;
    if (!pid) continue;
    const p = byId !== undefined ? byId.get(pid) : indexOf(nodes, pid);
    if (p === undefined || p === -1) {
      log.add(
        'orphan_span',
        `parent ${pid} of span ${node.id} is missing; the span is treated as a root`,
        node.id,
      );
    } else if (p === i) {
      log.add('parent_cycle', `span ${node.id} is its own parent; the link is dropped`, node.id);
    } else {
      node.parent = p;
    }
  }

  // 3. Break parent cycles (each node is walked once: 0 new, 1 on the current path, 2 done).
  const state = u8(0, n);
  // A stack with its own length: truncating an array's length is a runtime call.
  const path = i32(0, n, 0);
  for (let i = 0; i < n; i++) {
    if (state[i] !== 0) continue;
    let length = 0;
    let cur = i;
    while (cur !== -1 && state[cur] === 0) {
      state[cur] = 1;
      path[length++] = cur;
      cur = nodes[cur]!.parent;
    }
    if (cur !== -1 && state[cur] === 1) {
      const last = path[length - 1]!;
      log.add(
        'parent_cycle',
        `parent links of span ${nodes[last]!.id} form a cycle; the link is dropped`,
        nodes[last]!.id,
      );
      nodes[last]!.parent = -1;
    }
    for (let k = 0; k < length; k++) state[path[k]!] = 2;
  }

  return { traceId, log, nodes };
}

const SCAN_LIMIT = 16;

/** The first node with this id, or -1. */
function indexOf(nodes: Node[], id: string): number {
  for (let k = 0; k < nodes.length; k++) if (nodes[k]!.id === id) return k;
  return -1;
}

/** Every check of `normalise` passes (no fix, no problem). */
function isWellFormed(s: Partial<SpanLike>): boolean {
  const a = s.attributes;
  const code = s.status?.code;
  const r = s.resource;
  return (
    typeof s.spanId === 'string' &&
    s.spanId !== '' &&
    typeof s.traceId === 'string' &&
    typeof s.name === 'string' &&
    typeof a === 'object' &&
    a !== null &&
    !Array.isArray(a) &&
    Array.isArray(s.events) &&
    typeof s.startTime === 'number' &&
    Number.isFinite(s.startTime) &&
    (s.endTime === undefined || (typeof s.endTime === 'number' && Number.isFinite(s.endTime))) &&
    (code === 0 || code === 1 || code === 2) &&
    (s.parentSpanId === undefined || typeof s.parentSpanId === 'string') &&
    s.kind !== undefined &&
    (r === undefined || (typeof r === 'object' && r !== null && !Array.isArray(r)))
  );
}
/**
 * A span with every field reconstruction reads in a usable type, or undefined for
 * something that is not a span at all. Fixes are recorded as problems.
 */
function normalise(value: unknown, index: number, log: ProblemLog): SpanLike | undefined {
  if (typeof value !== 'object' || value === null) {
    log.add('span_invalid', `item ${index} is not a span`);
    return undefined;
  }
  const s = value as Partial<SpanLike>;
  // Spans from the processor and the OTLP reader are well formed: check before building the fixer.
  return isWellFormed(s) ? (s as SpanLike) : repair(s, index, log);
}

/**
 * `normalise` for a span that fails a check. A function of its own: the fixer closure's
 * variables live in a context that V8 allocates on entry, which well-formed spans never pay.
 */
function repair(s: Partial<SpanLike>, index: number, log: ProblemLog): SpanLike {
  let span = s as SpanLike;
  const fix = (patch: Partial<SpanLike>): void => {
    if (span === s) span = { ...s } as SpanLike;
    Object.assign(span, patch);
  };
  if (typeof s.spanId !== 'string' || s.spanId === '') {
    fix({ spanId: `missing-span-id-${index}` });
    log.add(
      'span_missing_id',
      `span ${index} ("${String(s.name ?? '')}") has no span id; given ${span.spanId}`,
      span.spanId,
    );
  }
  if (typeof s.traceId !== 'string') fix({ traceId: '' });
  if (typeof s.name !== 'string') {
    fix({ name: '' });
    log.add('span_missing_name', `span ${span.spanId} has no name`, span.spanId);
  }
  if (typeof s.attributes !== 'object' || s.attributes === null || Array.isArray(s.attributes)) {
    if (s.attributes !== undefined)
      log.add('attributes_invalid', `span ${span.spanId} has unreadable attributes`, span.spanId);
    fix({ attributes: {} });
  }
  if (!Array.isArray(s.events)) fix({ events: [] });
  if (typeof s.startTime !== 'number' || !Number.isFinite(s.startTime)) {
    log.add('span_missing_start', `span ${span.spanId} has no start time`, span.spanId);
    fix({ startTime: 0 });
  }
  if (s.endTime !== undefined && (typeof s.endTime !== 'number' || !Number.isFinite(s.endTime))) {
    fix({ endTime: undefined });
  }
  const code = s.status?.code;
  if (code !== 0 && code !== 1 && code !== 2) fix({ status: { code: 0 } });
  if (typeof s.parentSpanId !== 'string' && s.parentSpanId !== undefined) fix({ parentSpanId: undefined });
  if (span.kind === undefined) fix({ kind: 0 });
  if (
    s.resource !== undefined &&
    (typeof s.resource !== 'object' || s.resource === null || Array.isArray(s.resource))
  ) {
    fix({ resource: undefined });
  }
  return span;
}
