import type { Context } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { SpanRole, spanRole } from '../conventions/span-role.js';
import { parentIdOf, parentSpanOf } from './sdk-span.js';
import { NOTHING, recordSkipped, type SpanEnd } from './span-end.js';

/** Open spans a tombstone remembers the scope of. */
export const MAX_SCOPES = 1000;

/**
 * What remains of an evicted trace (or one cut by span limits): enough to refuse its later
 * spans and give its open runs a record. It is the only writer of what it remembers; the
 * trace buffer makes it, keeps it and lets it expire.
 */
export class Tombstone {
  /**
   * The sweep epoch of the trace's last span: tombstones of quiet traces expire like traces,
   * unless an agent span (or an implicit run's root) is still open in them.
   */
  private _activeEpoch: number;

  constructor(
    readonly traceId: string,
    epoch: number,
    /** Agent spans open in the trace (at eviction, or started since), by span id: whether each is nested. */
    private readonly _openAgents: Map<string, boolean>,
    /**
     * Agent-related spans open in the trace (at eviction, or started since), by span id:
     * whether an agent is at or above each, so that one starting below knows whether it is
     * nested (at most `MAX_SCOPES`).
     */
    private readonly _scopes: Map<string, boolean>,
    /** Calls ran outside every agent: the trace's local root is an implicit run, and gets a record when it ends. */
    private _implicit: boolean,
  ) {
    this._activeEpoch = epoch;
  }

  /** Whether it can go at `epoch`: quiet for longer than `ttlEpochs`, and no run left to record. */
  expired(epoch: number, ttlEpochs: number): boolean {
    if (this._openAgents.size > 0 || this._implicit) return false;
    return epoch - this._activeEpoch > ttlEpochs;
  }

  /**
   * A span of the trace starts (it is not held: the caller counts it): its scope is
   * remembered, nested when an agent is at or above its parent (the parent's scope, or the
   * grandparent's through the start context's span object).
   */
  started(span: ReadableSpan, spanId: string, role: SpanRole, parentContext: Context, epoch: number): void {
    this._activeEpoch = epoch;
    const parentId = parentIdOf(span);
    let nested = parentId === undefined ? false : this._scopes.get(parentId);
    if (nested === undefined) {
      // (parentId is defined here: scopes.get ran.)
      const candidate = parentSpanOf(parentContext, parentId!);
      const above = candidate === undefined ? undefined : parentIdOf(candidate);
      nested = above !== undefined && this._scopes.get(above) === true;
    }
    if (!nested && role === SpanRole.TOOL) this._implicit = true;
    if (this._scopes.size < MAX_SCOPES) this._scopes.set(spanId, nested || role === SpanRole.AGENT);
    if (role === SpanRole.AGENT && this._openAgents.size < MAX_SCOPES) this._openAgents.set(spanId, nested);
  }

  /** A span of the trace ends: an agent span's run, or the implicit run's root, gets an `incomplete_trace` record. */
  ended(span: ReadableSpan, spanId: string, epoch: number): SpanEnd {
    this._activeEpoch = epoch;
    const known = this._openAgents.get(spanId);
    this._scopes.delete(spanId);
    if (known === undefined && spanRole(span.name, span.attributes) !== SpanRole.AGENT) {
      // The local root of a trace whose calls ran outside every agent: the implicit run's.
      const root = span.parentSpanContext === undefined || span.parentSpanContext.isRemote === true;
      if (!this._implicit || !root) return NOTHING;
      this._implicit = false;
      return recordSkipped('incomplete_trace', false);
    }
    this._openAgents.delete(spanId);
    const parentId = parentIdOf(span);
    const nested = known ?? (parentId !== undefined && this._scopes.get(parentId) === true);
    return recordSkipped('incomplete_trace', nested);
  }
}
