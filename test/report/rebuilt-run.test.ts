import { describe, expect, it } from 'vitest';
import {
  describeRun,
  MAX_ARGS_CHARS,
  MAX_CALLS,
  MAX_DEPTH,
  MAX_MEMBERS,
} from '../../src/report/rebuilt-run.js';
import type { AgentRun, ToolExecution } from '../../src/types.js';

function run(agent: string, calls: number, args: unknown = { city: 'Paris' }): AgentRun {
  const r: AgentRun = {
    agent,
    traceId: 't',
    spanId: agent,
    implicit: false,
    children: [],
    executions: [],
    requests: [],
    calls: [],
    history: [],
    start: 0,
    status: 0,
    attributes: {},
    hasErrorSpan: false,
  };
  for (let i = 0; i < calls; i++) {
    const call: ToolExecution = {
      name: `tool_${i}`,
      args,
      argsSource: 'span',
      status: 'ok',
      fromHistory: false,
      requestOnly: false,
      spanId: `${agent}-${i}`,
      start: i,
      run: r,
      convention: 'gen_ai',
    };
    r.calls.push(call);
  }
  return r;
}

describe('describeRun: what a report shows of a rebuilt run, bounded', () => {
  it(`lists ${MAX_CALLS} calls and ${MAX_MEMBERS} members per run, ${MAX_DEPTH} levels deep, ${MAX_ARGS_CHARS} characters of arguments`, () => {
    const root = run('root', MAX_CALLS + 10, { text: 'x'.repeat(1000) });
    for (let i = 0; i < MAX_MEMBERS + 5; i++) root.children.push(run(`member-${i}`, 1));
    let deepest = root.children[0]!;
    for (let depth = 2; depth <= MAX_DEPTH + 2; depth++) {
      const child = run(`depth-${depth}`, 1);
      deepest.children.push(child);
      deepest = child;
    }
    const shown = describeRun(root, { values: false });
    expect([shown.calls.length, shown.callsOmitted]).toEqual([MAX_CALLS, 10]);
    expect(shown.calls[0]!.args).toHaveLength(MAX_ARGS_CHARS);
    expect(shown.calls[0]!.args.endsWith('…')).toBe(true);
    expect([shown.members.length, shown.membersOmitted]).toEqual([MAX_MEMBERS, 5]);
    let level = shown.members[0]!;
    let depth = 1;
    while (level.members.length > 0) {
      level = level.members[0]!;
      depth++;
    }
    expect(depth).toBe(MAX_DEPTH);
    expect(level.membersOmitted).toBe(1);
    // Redacted: the keys, never the values.
    expect(describeRun(run('r', 1), { values: true }).calls[0]!.args).toBe('{"city": …}');
    expect(describeRun(run('r', 1, ['a', 'b']), { values: true }).calls[0]!.args).toBe('[array of 2]');
    expect(describeRun(run('r', 1, 'raw text'), { values: true }).calls[0]!.args).toBe('[string]');
  });
});
