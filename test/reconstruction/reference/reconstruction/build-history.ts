import type { HistoryCall } from '../../../../src/types.js';
import { callKey, type RunState } from './trace-model.js';

/**
 * Phase 10 of reconstruction: history. Flagged spans, the agent's own history, and calls in
 * model inputs that match nothing of this trace are replays, kept apart from the run's calls.
 */
/** Call ids and (name, canonical args) keys of every execution and request of the trace, built on first use. */
export class SeenCalls {
  private _ids: Set<string> | undefined;
  private _keys: Set<string> | undefined;

  constructor(private readonly _states: RunState[]) {}

  hasId(id: string): boolean {
    if (!this._ids) {
      this._ids = new Set();
      for (const st of this._states) {
        for (const e of st.run.executions) if (e.callId) this._ids.add(e.callId);
        for (const r of st.run.requests) if (r.callId) this._ids.add(r.callId);
      }
    }
    return this._ids.has(id);
  }

  hasKey(key: string): boolean {
    if (!this._keys) {
      this._keys = new Set();
      for (const st of this._states) {
        for (const e of st.run.executions) this._keys.add(callKey(e.name, e.args));
        for (const r of st.run.requests) this._keys.add(callKey(r.name, r.args));
      }
    }
    return this._keys.has(key);
  }
}
export function buildHistory(st: RunState, seen: SeenCalls): void {
  const run = st.run;
  const out: HistoryCall[] = [];
  if (st.history.length === 0 && st.inputCalls.length === 0) {
    run.history = out;
    return;
  }
  const kept = new Set<string>();
  for (const h of st.history) keep(out, kept, h, keyOf(h));
  if (st.inputCalls.length === 0) {
    run.history = out;
    return;
  }
  for (const c of st.inputCalls)
    if (c.fromHistory) keep(out, kept, historyEntry(c, c.spanId, 'part_flag'), keyOf(c));
  // Every LLM input repeats the conversation so far: decide each distinct call once.
  const decided = new Set<string>();
  for (const c of st.inputCalls) {
    if (c.fromHistory) continue;
    const own = keyOf(c);
    if (decided.has(own)) continue;
    decided.add(own);
    if (c.callId !== undefined && seen.hasId(c.callId)) continue;
    if (seen.hasKey(callKey(c.name, c.args))) continue;
    keep(out, kept, historyEntry(c, c.spanId, 'input_messages'), own);
  }
  run.history = out;
}
function keep(out: HistoryCall[], kept: Set<string>, h: HistoryCall, key: string): void {
  if (kept.has(key)) return;
  kept.add(key);
  out.push(h);
}
function keyOf(c: { name: string; callId?: string | undefined; args?: unknown }): string {
  return c.callId ? 'id:' + c.callId : 'key:' + callKey(c.name, c.args);
}
export function historyEntry(
  call: { name: string; callId?: string | undefined; args?: unknown },
  spanId: string,
  reason: HistoryCall['reason'],
): HistoryCall {
  const h: HistoryCall = { name: call.name, spanId, reason };
  if (call.callId !== undefined) h.callId = call.callId;
  if (call.args !== undefined) h.args = call.args;
  return h;
}
