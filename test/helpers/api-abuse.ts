/**
 * Hostile but legal use of the OpenTelemetry API, as programs of steps run against real
 * tracer providers: spans started under every kind of parent context and at odd times, ended
 * twice, never, out of order or before they started, renamed and given attributes of every
 * convention (and of wrong types, huge, malformed, deeply nested, `__proto__`) before and
 * after their end, providers flushed and shut down in the middle of it all. Steps name spans
 * by index modulo the spans started so far, so any prefix or subsequence of a program (as
 * fast-check shrinks it) is still a program.
 */
import type {
  Attributes,
  AttributeValue,
  Context,
  Link,
  Span,
  SpanContext,
  Tracer,
} from '@opentelemetry/api';
import { INVALID_SPAN_CONTEXT, ROOT_CONTEXT, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import fc from 'fast-check';
import * as semconv from '../../src/semconv.js';

const MB_STRING = 'x'.repeat(1024 * 1024);
const DEEP_ARRAYS = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
const DEEP_OBJECTS = `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`;

/** Tool and agent names: ordinary, empty, long, and the names of `Object.prototype`'s members. */
export const NAMES = [
  'lookup',
  'delete',
  'support',
  '__proto__',
  'constructor',
  'toString',
  '',
  'n'.repeat(300),
];

/** Attribute values: the right kind for some key, and every wrong kind. */
export const VALUES: readonly AttributeValue[] = [
  // Role-deciding values of each convention.
  'invoke_agent',
  'execute_tool',
  'chat',
  'invoke_workflow',
  'create_agent',
  'agent.run',
  'tool.execute',
  'AGENT',
  'TOOL',
  'LLM',
  'CHAIN',
  'agent',
  'tool',
  'workflow',
  'task',
  'agent_run',
  'tool_call',
  'ai.toolCall',
  'ai.generateText',
  ...NAMES,
  // Arguments, results and messages, well-formed.
  '{"id":1}',
  '{"ok":true}',
  '[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"lookup","arguments":{"id":1}}]}]',
  '[{"role":"assistant","parts":[{"type":"tool_call","id":"c2","name":"__proto__","arguments":{"__proto__":{"polluted":1}}}]}]',
  '[{"toolCallType":"function","toolCallId":"c3","toolName":"constructor","args":"{\\"id\\":1}"}]',
  '[{"role":"user","content":[{"type":"tool-call","toolCallId":"c4","toolName":"lookup","input":{"id":1}}]}]',
  // Wrong types.
  0,
  -1,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  1e308,
  true,
  false,
  [],
  ['invoke_agent'],
  ['execute_tool', 'chat'],
  [1, 2, 3],
  [true, false],
  // Hostile strings.
  MB_STRING,
  '\uD800 lone surrogate \uDC00',
  'nul\u0000byte',
  '{"id":[1,2',
  '[{"role":"assistant","parts":[{"type":"tool_call"',
  DEEP_ARRAYS,
  DEEP_OBJECTS,
  '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}}',
  '{"toString":1,"hasOwnProperty":2,"valueOf":3}',
  'null',
  '1e999',
  '"just a string"',
  '[null,{},[]]',
];

/**
 * Every attribute key toolwatch's conventions read, from `src/semconv.ts`, but not the verdict's
 * own summary attributes (an application writing those would make the count of records
 * written on a span meaningless).
 */
export const KEYS: readonly string[] = [
  ...new Set(
    Object.entries(semconv)
      .filter(([name, value]) => name.startsWith('ATTR_') && typeof value === 'string')
      .map(([, value]) => value as string)
      .filter((key) => !key.startsWith('toolwatch.evaluation.') && key !== semconv.ATTR_TOOLWATCH_KEEP),
  ),
];

/** What a span says it is at its start: one shape per convention and role, and ordinary spans. */
export const SHAPES: ReadonlyArray<{ name: string; attributes: Attributes }> = [
  {
    name: 'invoke_agent support',
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'support' },
  },
  { name: 'invoke_agent', attributes: { 'gen_ai.operation.name': 'invoke_agent' } },
  {
    name: 'execute_tool lookup',
    attributes: {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'lookup',
      'gen_ai.tool.call.id': 'call_1',
      'gen_ai.tool.call.arguments': '{"id":1}',
    },
  },
  {
    name: 'execute_tool delete',
    attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'delete' },
  },
  { name: 'chat model', attributes: { 'gen_ai.operation.name': 'chat' } },
  { name: 'invoke_workflow flow', attributes: { 'gen_ai.operation.name': 'invoke_workflow' } },
  {
    name: 'ai.generateText',
    attributes: { 'ai.operationId': 'ai.generateText', 'ai.telemetry.functionId': 'support' },
  },
  {
    name: 'ai.toolCall',
    attributes: {
      'ai.operationId': 'ai.toolCall',
      'ai.toolCall.name': 'lookup',
      'ai.toolCall.id': 'c1',
      'ai.toolCall.args': '{"id":1}',
    },
  },
  { name: 'ai.generateText.doGenerate', attributes: { 'ai.operationId': 'ai.generateText.doGenerate' } },
  { name: 'support', attributes: { 'openinference.span.kind': 'AGENT', 'agent.name': 'support' } },
  {
    name: 'lookup',
    attributes: { 'openinference.span.kind': 'TOOL', 'tool.name': 'lookup', 'input.value': '{"id":1}' },
  },
  { name: 'ChatModel', attributes: { 'openinference.span.kind': 'LLM' } },
  { name: 'RunnableSequence', attributes: { 'openinference.span.kind': 'chain' } },
  { name: 'agent.support', attributes: { 'mastra.span.type': 'agent_run', 'gen_ai.agent.name': 'support' } },
  {
    name: 'tool.execute lookup',
    attributes: { 'mastra.span.type': 'tool_call', 'gen_ai.tool.input': '{"id":1}' },
  },
  {
    name: 'agent support',
    attributes: { 'gen_ai.operation.name': 'agent.run', 'gen_ai.agent.name': 'support' },
  },
  {
    name: 'tool lookup',
    attributes: { 'gen_ai.operation.name': 'tool.execute', 'gen_ai.tool.name': 'lookup' },
  },
  {
    name: 'support.agent',
    attributes: { 'traceloop.span.kind': 'agent', 'traceloop.entity.name': 'support' },
  },
  {
    name: 'lookup.tool',
    attributes: { 'traceloop.span.kind': 'tool', 'traceloop.entity.input': '{"id":1}' },
  },
  { name: 'flow.workflow', attributes: { 'traceloop.span.kind': 'workflow' } },
  { name: 'execute_tool lookup', attributes: { 'traceloop.span.kind': 'task' } },
  {
    name: 'execute_tool __proto__',
    attributes: {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': '__proto__',
      'gen_ai.tool.call.id': '__proto__',
    },
  },
  {
    name: 'invoke_agent constructor',
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'constructor' },
  },
  { name: 'GET /orders', attributes: { 'http.request.method': 'GET' } },
  { name: 'work', attributes: {} },
  { name: '', attributes: {} },
];

/** The parent context a span starts under (relative to the span the step names, if any). */
export const PARENTS = [
  /** The parent span object, as a context manager would pass it. */
  'span',
  /** Only the parent's span context (in-process propagation). */
  'span_context',
  /** The parent's context, marked remote. */
  'remote',
  /** A remote parent from another trace. */
  'foreign',
  'invalid',
  /** A non-recording span wrapping the parent's context. */
  'wrapped',
  'root',
] as const;

export const START_TIMES = ['now', 'past', 'future', 'performance_zero', 'epoch_zero', 'hrtime'] as const;
export const END_TIMES = ['now', 'now', 'before_start', 'future', 'nan', 'epoch_zero'] as const;

export type Step =
  | {
      k: 'start';
      parent: number;
      under: (typeof PARENTS)[number];
      shape: number;
      at: (typeof START_TIMES)[number];
      provider: number;
      links: boolean;
    }
  | { k: 'end'; target: number; at: (typeof END_TIMES)[number] }
  | { k: 'set'; target: number; key: number; value: number }
  | { k: 'set_many'; target: number; pairs: Array<[number, number]> }
  | { k: 'rename'; target: number; name: number }
  | { k: 'status'; target: number; error: boolean }
  | { k: 'event'; target: number; value: number }
  | { k: 'exception'; target: number }
  | { k: 'link'; target: number; other: number }
  | { k: 'sweep' }
  | { k: 'flush'; provider: number; wait: boolean }
  | { k: 'shutdown'; provider: number; wait: boolean };

const index = fc.nat({ max: 1000 });

export const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 32,
    arbitrary: fc.record({
      k: fc.constant('start' as const),
      parent: index,
      under: fc.constantFrom(...PARENTS, 'span', 'span', 'span'),
      shape: fc.nat({ max: SHAPES.length - 1 }),
      at: fc.constantFrom(...START_TIMES, 'now', 'now', 'now', 'now'),
      provider: fc.nat({ max: 1 }),
      links: fc.boolean(),
    }),
  },
  {
    weight: 24,
    arbitrary: fc.record({
      k: fc.constant('end' as const),
      target: index,
      at: fc.constantFrom(...END_TIMES),
    }),
  },
  {
    weight: 20,
    arbitrary: fc.record({
      k: fc.constant('set' as const),
      target: index,
      key: fc.nat({ max: KEYS.length - 1 }),
      value: fc.nat({ max: VALUES.length - 1 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant('set_many' as const),
      target: index,
      pairs: fc.array(fc.tuple(fc.nat({ max: KEYS.length - 1 }), fc.nat({ max: VALUES.length - 1 })), {
        maxLength: 6,
      }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant('rename' as const),
      target: index,
      name: fc.nat({ max: SHAPES.length - 1 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({ k: fc.constant('status' as const), target: index, error: fc.boolean() }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant('event' as const),
      target: index,
      value: fc.nat({ max: VALUES.length - 1 }),
    }),
  },
  { weight: 4, arbitrary: fc.record({ k: fc.constant('exception' as const), target: index }) },
  { weight: 4, arbitrary: fc.record({ k: fc.constant('link' as const), target: index, other: index }) },
  { weight: 4, arbitrary: fc.record({ k: fc.constant('sweep' as const) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant('flush' as const),
      provider: fc.nat({ max: 1 }),
      wait: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant('shutdown' as const),
      provider: fc.nat({ max: 1 }),
      wait: fc.boolean(),
    }),
  },
);

let foreignCounter = 0;

function foreignContext(): SpanContext {
  foreignCounter++;
  const hex = foreignCounter.toString(16).padStart(16, '0');
  return { traceId: `ffff${hex}ffffffffffff`, spanId: hex, traceFlags: TraceFlags.SAMPLED, isRemote: true };
}

function parentContext(parent: Span | undefined, under: Step & { k: 'start' }): Context {
  if (under.under === 'root' || parent === undefined) {
    if (under.under === 'foreign') return trace.setSpanContext(ROOT_CONTEXT, foreignContext());
    if (under.under === 'invalid') return trace.setSpanContext(ROOT_CONTEXT, INVALID_SPAN_CONTEXT);
    return ROOT_CONTEXT;
  }
  const ctx = parent.spanContext();
  switch (under.under) {
    case 'span':
      return trace.setSpan(ROOT_CONTEXT, parent);
    case 'span_context':
      return trace.setSpanContext(ROOT_CONTEXT, ctx);
    case 'remote':
      return trace.setSpanContext(ROOT_CONTEXT, { ...ctx, isRemote: true });
    case 'foreign':
      return trace.setSpanContext(ROOT_CONTEXT, foreignContext());
    case 'invalid':
      return trace.setSpanContext(ROOT_CONTEXT, INVALID_SPAN_CONTEXT);
    case 'wrapped':
      return trace.setSpan(ROOT_CONTEXT, trace.wrapSpanContext(ctx));
  }
}

function startTime(at: (typeof START_TIMES)[number]): number | [number, number] | undefined {
  switch (at) {
    case 'now':
      return undefined;
    case 'past':
      return Date.now() - 3_600_000;
    case 'future':
      return Date.now() + 3_600_000;
    case 'performance_zero':
      // A number below `performance.now()` is read as a performance timestamp.
      return 0.5;
    case 'epoch_zero':
      return [0, 0];
    case 'hrtime':
      return [Math.floor(Date.now() / 1000), 999_999_999];
  }
}

function endTime(at: (typeof END_TIMES)[number]): number | [number, number] | undefined {
  switch (at) {
    case 'now':
      return undefined;
    case 'before_start':
      return Date.now() - 86_400_000;
    case 'future':
      return Date.now() + 86_400_000;
    case 'nan':
      return Number.NaN;
    case 'epoch_zero':
      return [0, 0];
  }
}

export interface Target {
  tracers: Tracer[];
  flush(provider: number): Promise<void>;
  shutdown(provider: number): Promise<void>;
  /** One sweep of the processor's trace buffer, as its interval runs it. */
  sweep(): void;
}

/**
 * Runs a program as an application would. Every API call is checked for exceptions (none may
 * reach the application): the first one thrown is returned with the step that threw it.
 * Returns the spans started, and the promises of the flushes and shutdowns not waited for.
 */
export async function runSteps(
  steps: readonly Step[],
  target: Target,
): Promise<{
  spans: Span[];
  /** The index in `SHAPES` each span started as, in the order of `spans`. */
  shapes: number[];
  /** Spans whose first `end()` came before any provider was asked to shut down. */
  endedBeforeShutdown: Set<Span>;
  pending: Array<Promise<unknown>>;
  thrown: { step: number; error: unknown } | undefined;
}> {
  const spans: Span[] = [];
  const shapes: number[] = [];
  const endedBeforeShutdown = new Set<Span>();
  let shutdown = false;
  const pending: Array<Promise<unknown>> = [];
  const at = (i: number): Span | undefined => (spans.length === 0 ? undefined : spans[i % spans.length]);
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i]!;
    try {
      switch (s.k) {
        case 'start': {
          const shape = SHAPES[s.shape]!;
          const parent = at(s.parent);
          const links: Link[] = [];
          if (s.links && parent !== undefined)
            links.push({ context: parent.spanContext() }, { context: INVALID_SPAN_CONTEXT });
          const time = startTime(s.at);
          const span = target.tracers[s.provider]!.startSpan(
            shape.name,
            {
              attributes: { ...shape.attributes },
              ...(links.length > 0 ? { links } : {}),
              ...(time === undefined ? {} : { startTime: time }),
            },
            parentContext(parent, s),
          );
          spans.push(span);
          shapes.push(s.shape);
          break;
        }
        case 'end': {
          const span = at(s.target);
          if (span === undefined) break;
          if (!shutdown && span.isRecording()) endedBeforeShutdown.add(span);
          span.end(endTime(s.at));
          break;
        }
        case 'set':
          at(s.target)?.setAttribute(KEYS[s.key]!, VALUES[s.value]!);
          break;
        case 'set_many': {
          const attributes: Attributes = {};
          for (const [key, value] of s.pairs) attributes[KEYS[key]!] = VALUES[value]!;
          at(s.target)?.setAttributes(attributes);
          break;
        }
        case 'rename':
          at(s.target)?.updateName(SHAPES[s.name]!.name);
          break;
        case 'status':
          at(s.target)?.setStatus(
            s.error ? { code: SpanStatusCode.ERROR, message: 'failed' } : { code: SpanStatusCode.OK },
          );
          break;
        case 'event':
          at(s.target)?.addEvent('gen_ai.evaluation.result', { 'gen_ai.evaluation.name': VALUES[s.value]! });
          break;
        case 'exception':
          at(s.target)?.recordException(
            Object.assign(new Error('application error'), { name: 'ApplicationError' }),
          );
          break;
        case 'link': {
          const other = at(s.other);
          if (other !== undefined)
            at(s.target)?.addLinks([{ context: other.spanContext() }, { context: INVALID_SPAN_CONTEXT }]);
          break;
        }
        case 'sweep':
          target.sweep();
          break;
        case 'flush': {
          const done = target.flush(s.provider);
          if (s.wait) await done;
          else pending.push(done);
          break;
        }
        case 'shutdown': {
          shutdown = true;
          const done = target.shutdown(s.provider);
          if (s.wait) await done;
          else pending.push(done);
          break;
        }
      }
    } catch (error) {
      return { spans, shapes, endedBeforeShutdown, pending, thrown: { step: i, error } };
    }
  }
  return { spans, shapes, endedBeforeShutdown, pending, thrown: undefined };
}
