import { ROOT_CONTEXT, TraceFlags, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { deciderOf, refusalText } from '../../../src/guard/adapters/tool-guard.js';
import { parsePolicy } from '../../../src/policy/parse-policy.js';

/** Two calls per run, no refund. */
const policy = parsePolicy({
  version: 1,
  rules: [
    {
      name: 'support',
      match: { agent: 'support_agent' },
      guard: { mode: 'enforce' },
      scorers: [{ kind: 'trajectory', forbidden_tools: ['refund'], max_calls: 2 }],
    },
  ],
});

function inTrace(traceId: string) {
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId,
    spanId: '00f067aa0ba902b7',
    traceFlags: TraceFlags.SAMPLED,
  });
}

const A = inTrace('4bf92f3577b34da6a3ce929d0e0e4736');
const B = inTrace('0af7651916cd43dd8448eb211c80319c');

describe('deciderOf', () => {
  it('from the policy, keeps each run (trace id of the context, agent) and counts its calls', () => {
    const decide = deciderOf(policy);
    const call = (tool: string, context = A, agent = 'support_agent') =>
      decide({ tool, agent }, context).allowed;
    expect(call('lookup')).toBe(true);
    expect(call('lookup')).toBe(true);
    expect(call('lookup')).toBe(false); // max_calls 2 in trace A
    expect(call('lookup', B)).toBe(true); // another trace
    expect(call('lookup', A, 'billing_agent')).toBe(true); // another agent: no rule
    expect(decide({ tool: 'refund', agent: 'support_agent' }, B)).toMatchObject({
      allowed: false,
      kind: 'forbidden',
      rule: 'support',
    });
  });

  it('from the policy, judges a call without a span on its own: never counted with another', () => {
    const decide = deciderOf(policy);
    for (let i = 0; i < 5; i++)
      expect(decide({ tool: 'lookup', agent: 'support_agent' }, ROOT_CONTEXT).allowed).toBe(true);
    expect(decide({ tool: 'refund', agent: 'support_agent' }, ROOT_CONTEXT).allowed).toBe(false);
  });

  it('from a processor that throws, allows the call and never throws into the framework', () => {
    const decide = deciderOf({
      checkToolCall: () => {
        throw new Error('broken guard');
      },
    });
    expect(decide({ tool: 'refund' }, A)).toMatchObject({ allowed: true, decision: 'allow' });
  });
});

describe('refusalText', () => {
  it('words the reasons for the model, or what the application asks for', () => {
    const decision = {
      allowed: false,
      decision: 'deny' as const,
      enforced: true,
      reasons: ['a', 'b'],
      rule: 'r',
    };
    expect(refusalText(decision, { tool: 'refund' }, undefined)).toBe(
      'Refused by policy: the refund call was not run (a; b).',
    );
    expect(refusalText({ ...decision, reasons: [] }, { tool: 'refund' }, undefined)).toBe(
      'Refused by policy: the refund call was not run (rule r).',
    );
    expect(refusalText(decision, { tool: 'refund' }, { message: (d, c) => `${c.tool}: ${d.rule}` })).toBe(
      'refund: r',
    );
    // A wording function that throws never reaches the framework: the default wording stands in.
    const throwing = () => {
      throw new Error('bad template');
    };
    expect(refusalText(decision, { tool: 'refund' }, { message: throwing })).toBe(
      'Refused by policy: the refund call was not run (a; b).',
    );
  });
});
