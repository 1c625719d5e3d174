import { describe, expect, it } from 'vitest';
import { CONVENTION_ADAPTERS, classifySpan } from '../../src/conventions/classify.js';
import { NO_INPUT } from '../../src/conventions/merge-llm-facts.js';
import { safeAgentName } from '../../src/reconstruction/read-facts.js';
import type { SpanLike } from '../../src/types.js';
import { recordedSpans } from '../helpers/recorded-fixtures.js';

/**
 * Reconstruction classifies a span once and then reads it through the claiming adapter's
 * `claimed` readers, which skip the role check. They must read exactly what the public
 * readers read for a span of that role, and the classification objects are shared.
 */

describe('claimed readers', () => {
  const spans = recordedSpans();

  it('llmSaysNothing only for model spans every reader reads as nothing (recorded spans, and each with its content)', () => {
    let silent = 0;
    for (const span of spans) {
      const { role, adapter } = classifySpan(span);
      if (role !== 'llm' || adapter?.claimed?.llmSaysNothing?.(span) !== true) continue;
      silent++;
      const output = adapter.llmOutput(span)!;
      expect(output.requests, span.name).toEqual([]);
      expect(output.hints ?? [], span.name).toEqual([]);
      expect(output.refusals ?? [], span.name).toEqual([]);
      expect(output.toolDefinitions ?? [], span.name).toEqual([]);
      expect(adapter.llmInput(span), span.name).toStrictEqual(NO_INPUT);
    }
    // The recorded GenAI traces have content-less model spans, and ones with content.
    expect(silent).toBeGreaterThan(0);
    let speaking = 0;
    for (const span of spans) {
      const { role, adapter } = classifySpan(span);
      if (role !== 'llm' || adapter?.claimed?.llmSaysNothing === undefined) continue;
      const output = adapter.llmOutput(span);
      const input = adapter.llmInput(span);
      const says =
        (output?.requests.length ?? 0) > 0 ||
        (output?.hints?.length ?? 0) > 0 ||
        (output?.refusals?.length ?? 0) > 0 ||
        (output?.toolDefinitions?.length ?? 0) > 0 ||
        input.inputCalls.length > 0 ||
        input.refusals.length > 0;
      if (!says) continue;
      speaking++;
      expect(adapter.claimed.llmSaysNothing(span), span.name).toBe(false);
    }
    expect(speaking).toBeGreaterThan(0);
  });

  it('every default adapter has them', () => {
    for (const adapter of CONVENTION_ADAPTERS) expect(adapter.claimed, adapter.name).toBeDefined();
  });

  it('read what the public readers read, for every recorded span of the role the adapter gave it', () => {
    const seen = new Map<string, number>();
    for (const span of spans) {
      for (const adapter of CONVENTION_ADAPTERS) {
        const role = adapter.role(span);
        const claimed = adapter.claimed!;
        const label = `${adapter.name} ${role} ${span.name}`;
        if (role === 'tool') expect(claimed.tool(span), label).toStrictEqual(adapter.tool(span));
        else if (role === 'agent') {
          expect(claimed.agent(span), label).toStrictEqual(adapter.agent(span));
          expect(claimed.agentName(span), label).toBe(adapter.agent(span)!.name);
        } else if (role === 'llm') {
          expect(claimed.llmOutput(span), label).toStrictEqual(adapter.llmOutput(span));
          expect(claimed.llmInput(span), label).toStrictEqual(adapter.llmInput(span));
        } else continue;
        seen.set(`${adapter.name} ${role}`, (seen.get(`${adapter.name} ${role}`) ?? 0) + 1);
      }
    }
    // The fixtures reach every adapter's tool, agent and model readers.
    expect([...seen.keys()].sort()).toEqual(
      expect.arrayContaining([
        'ai_sdk agent',
        'ai_sdk llm',
        'ai_sdk tool',
        'gen_ai agent',
        'gen_ai llm',
        'gen_ai tool',
        'mastra agent',
        'mastra llm',
        'mastra tool',
        'openinference agent',
        'openinference llm',
        'openinference tool',
      ]),
    );
  });

  it("the name rule matching reads (the classifying adapter's agentName) is the name its agent() reads", () => {
    // What spanIdentity read before it read names alone: the classifying adapter's agent().
    const asItWas = (span: SpanLike) => classifySpan(span).adapter?.agent(span)?.name;
    const now = (span: SpanLike) => {
      const { adapter, role } = classifySpan(span);
      return adapter !== undefined && role === 'agent' ? safeAgentName(adapter, span) : undefined;
    };
    const named = new Set<string>();
    for (const span of spans) {
      expect(now(span), span.name).toBe(asItWas(span));
      if (now(span) !== undefined) named.add(classifySpan(span).adapter!.name);
    }
    expect([...named].sort()).toEqual(['ai_sdk', 'gen_ai', 'mastra', 'openinference']);
    // Fallbacks of each adapter, beyond what the recordings use: ids, prefixes, the bare span name.
    const span = (name: string, attributes: SpanLike['attributes']): SpanLike => ({
      traceId: 't',
      spanId: 's',
      name,
      kind: 0,
      startTime: 1,
      status: { code: 0 },
      attributes,
      events: [],
    });
    const variants = [
      span('invoke_agent', { 'gen_ai.operation.name': 'invoke_agent' }),
      span('invoke_agent helper', { 'gen_ai.operation.name': 'invoke_agent' }),
      span('agent run', { 'gen_ai.operation.name': 'invoke_agent', agent_name: 'pydantic' }),
      span('agent.stream', { 'gen_ai.operation.name': 'agent.run', 'agent.id': 'legacy-id' }),
      span('agent.researcher', { 'gen_ai.operation.name': 'agent.run' }),
      span('run', { 'gen_ai.operation.name': 'agent.run' }),
      span('ai.streamText', { 'ai.operationId': 'ai.streamText', 'resource.name': 'res' }),
      span('team.run', { 'openinference.span.kind': 'AGENT', 'graph.node.name': 'node' }),
      span('researcher.agent', { 'traceloop.span.kind': 'agent' }),
      span('researcher.agent', { 'traceloop.span.kind': 'agent', 'traceloop.entity.name': 'entity' }),
      span('x', { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 7 }),
      // A tool span: no agent name from any adapter.
      span('execute_tool lookup', { 'gen_ai.operation.name': 'execute_tool' }),
    ];
    const claimedBy = new Set<string>();
    for (const variant of variants) {
      expect(now(variant), variant.name).toBe(asItWas(variant));
      if (now(variant) !== undefined) claimedBy.add(classifySpan(variant).adapter!.name);
    }
    expect(claimedBy.size).toBe(CONVENTION_ADAPTERS.length);
    // A claimed reader that throws (here: attributes that throw once classified) gives no name.
    let classified = false;
    const hostile = span('invoke_agent x', {});
    Object.defineProperty(hostile, 'attributes', {
      get() {
        if (classified) throw new Error('hostile');
        return { 'gen_ai.operation.name': 'invoke_agent' };
      },
    });
    const { adapter, role } = classifySpan(hostile);
    classified = true;
    expect(role).toBe('agent');
    expect(safeAgentName(adapter!, hostile)).toBeUndefined();
  });

  it('are not asked for a role the adapter did not give: the public readers refuse such spans', () => {
    const genAi = CONVENTION_ADAPTERS[0]!;
    const chat: SpanLike = {
      traceId: 't',
      spanId: 's',
      name: 'chat gpt',
      kind: 0,
      startTime: 1,
      status: { code: 0 },
      attributes: { 'gen_ai.operation.name': 'chat' },
      events: [],
    };
    expect(genAi.tool(chat)).toBeUndefined();
    expect(genAi.agent(chat)).toBeUndefined();
    expect(genAi.llmInput({ ...chat, attributes: { 'gen_ai.operation.name': 'execute_tool' } })).toBe(
      NO_INPUT,
    );
  });

  it('classification objects are shared per adapter and role, and say the same as a fresh one', () => {
    for (const span of spans) {
      const a = classifySpan(span);
      const b = classifySpan(span);
      expect(a).toBe(b);
      // A custom adapter list gets its own objects with the same content.
      const custom = classifySpan(span, [...CONVENTION_ADAPTERS]);
      if (a.adapter !== undefined) expect(custom).not.toBe(a);
      expect(custom.role).toBe(a.role);
      expect(custom.adapter).toBe(a.adapter);
    }
  });
});
