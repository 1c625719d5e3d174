/**
 * An `AgentRun` built directly in memory, for property tests that generate thousands of call
 * sequences (the trace path — spans, decoding, reconstruction — is covered by the tests that
 * use the trace builder).
 */
import type { AgentRun, HistoryCall, ToolExecution, ToolStatus } from '../../src/types.js';

export interface InMemoryCall {
  name: string;
  status: ToolStatus;
  callId?: string;
  args?: unknown;
  /** Default: true for `refused` calls (request-only). */
  requestOnly?: boolean;
}

export function inMemoryRun(calls: InMemoryCall[], history: HistoryCall[] = []): AgentRun {
  const run: AgentRun = {
    agent: 'agent',
    traceId: '0'.repeat(32),
    spanId: 'run',
    implicit: false,
    children: [],
    executions: [],
    requests: [],
    calls: [],
    history,
    start: 0,
    status: 0,
    attributes: {},
    hasErrorSpan: false,
  };
  run.calls = calls.map(
    (c, i): ToolExecution => ({
      name: c.name,
      ...(c.callId !== undefined ? { callId: c.callId } : {}),
      ...(c.args !== undefined ? { args: c.args } : {}),
      argsSource: c.args !== undefined ? 'span' : 'none',
      status: c.status,
      fromHistory: false,
      requestOnly: c.requestOnly ?? c.status === 'refused',
      spanId: `s${i}`,
      start: i,
      run,
      convention: 'gen_ai',
    }),
  );
  return run;
}
