import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Attributes } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { classify } from '../../src/conventions/classify.js';
import { spansFromOtlpJson } from '../../src/conventions/from-otlp-json.js';
import {
  agentNameOf,
  lateSpanRole,
  SpanRole,
  spanRole,
  toolNameOf,
} from '../../src/conventions/span-role.js';
import { SpanFactory } from '../helpers/span-like.js';

describe('spanRole', () => {
  it.each([
    ['execute_tool x', { 'gen_ai.operation.name': 'execute_tool' }, SpanRole.TOOL],
    ['invoke_agent a', { 'gen_ai.operation.name': 'invoke_agent' }, SpanRole.AGENT],
    ['chat m', { 'gen_ai.operation.name': 'chat' }, SpanRole.LLM],
    ['lookup', { 'openinference.span.kind': 'TOOL' }, SpanRole.TOOL],
    ['Agent', { 'openinference.span.kind': 'AGENT' }, SpanRole.AGENT],
    ['LangGraph', { 'openinference.span.kind': 'CHAIN' }, SpanRole.CHAIN],
    ['x.tool', { 'traceloop.span.kind': 'tool' }, SpanRole.TOOL],
    ['ai.toolCall', {}, SpanRole.TOOL],
    ['ai.generateText', {}, SpanRole.AGENT],
    ['ai.generateText.doGenerate', {}, SpanRole.LLM],
    ['execute_tool weather', {}, SpanRole.TOOL],
    ['weather', { 'gen_ai.operation.name': 'tool.execute' }, SpanRole.TOOL],
    ["chunk: 'tool-call'", { 'mastra.span.type': 'model_chunk' }, SpanRole.LLM],
    ['GET /orders', { 'http.request.method': 'GET' }, SpanRole.NONE],
    ['SELECT', {}, SpanRole.NONE],
  ] as const)('%s is %s', (name, attributes, role) => {
    expect(spanRole(name, attributes)).toBe(role);
  });
});

describe('Mastra agent spans', () => {
  // A span an agent on the hot path but no run in reconstruction is held and ended as an agent,
  // and rebuilt into no run at all: neither it nor the agents below it (nested under it on the
  // hot path, top-level in reconstruction) get a verdict or a record.
  it('are agents by their operation name, as reconstruction reads them, not by mastra.span.type alone', () => {
    const span = (attributes: Attributes) => new SpanFactory().make('agent.support', attributes);
    const typed = { 'mastra.span.type': 'agent_run', 'gen_ai.agent.name': 'support' };
    const run = { ...typed, 'gen_ai.operation.name': 'agent.run' };
    expect(classify(span(run))).toBe('agent');
    expect(spanRole('agent.support', run)).toBe(SpanRole.AGENT);
    expect(classify(span(typed))).not.toBe('agent');
    // Kept all the same, as every Mastra span is (step and chunk spans carry tool calls).
    expect(spanRole('agent.support', typed)).toBe(SpanRole.LLM);
  });
});

describe('toolNameOf / agentNameOf', () => {
  it('reads the tool name from attributes first, then from the span name', () => {
    expect(toolNameOf('execute_tool x', { 'gen_ai.tool.name': 'lookup' })).toBe('lookup');
    expect(toolNameOf('ai.toolCall', { 'ai.toolCall.name': 'weather' })).toBe('weather');
    expect(toolNameOf('execute_tool search', {})).toBe('search');
    expect(toolNameOf('search', { 'openinference.span.kind': 'TOOL' })).toBe('search');
    expect(toolNameOf('GET /', {})).toBeUndefined();
  });

  it('reads the agent name from attributes, then from the span name', () => {
    expect(agentNameOf('invoke_agent x', { 'gen_ai.agent.name': 'refund-agent' })).toBe('refund-agent');
    expect(agentNameOf('ai.generateText', { 'ai.telemetry.functionId': 'support' })).toBe('support');
    expect(agentNameOf('invoke_agent triage', {})).toBe('triage');
  });
});

describe('lateSpanRole', () => {
  it('recognises only conventions that write their attributes at the end', () => {
    expect(lateSpanRole('lookup', { 'openinference.span.kind': 'TOOL' })).toBe(SpanRole.TOOL);
    expect(lateSpanRole('run', { 'gen_ai.operation.name': 'invoke_agent' })).toBe(SpanRole.AGENT);
    // Names alone are known at start; a span recognised by name was seen then.
    expect(lateSpanRole('execute_tool x', {})).toBe(SpanRole.NONE);
    expect(lateSpanRole('GET /', { 'http.request.method': 'GET' })).toBe(SpanRole.NONE);
  });
});

describe('spanRole agrees with reconstruction on every recorded trace', () => {
  const root = fileURLToPath(new URL('../fixtures/', import.meta.url));
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) =>
    f.endsWith('.otlp.json'),
  );

  it('covers the recorded frameworks', () => {
    expect(files.length).toBeGreaterThan(50);
  });

  // The hot path decides what the processor holds and when it judges: an agent span it missed
  // is never judged, a tool span it missed is a call the verdict never sees.
  it.each(files)('%s', (file) => {
    const spans = spansFromOtlpJson(JSON.parse(readFileSync(join(root, file), 'utf8')));
    expect(spans.length).toBeGreaterThan(0);
    for (const span of spans) {
      const role = classify(span);
      const hot = spanRole(span.name, span.attributes as Attributes);
      const where = `${span.name} ${JSON.stringify(span.attributes).slice(0, 200)}`;
      expect(hot === SpanRole.AGENT, `agent: ${where}`).toBe(role === 'agent');
      if (role === 'tool') expect(hot, `tool: ${where}`).toBe(SpanRole.TOOL);
      if (role === 'llm') expect([SpanRole.LLM, SpanRole.TOOL], `llm: ${where}`).toContain(hot);
    }
  });
});
