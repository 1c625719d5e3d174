import type { SpanEntry } from './span-entry.js';

/**
 * What should happen after a span of an agent trace ended, as the trace's owner (a held
 * trace, a followed one, an evicted one's tombstone) says it: the processor acts on it. The
 * owners do their own bookkeeping and call nothing above them; the outcomes without a payload
 * are shared constants, so an ordinary span's end allocates nothing.
 */
export type SpanEnd =
  /** Nothing more to do. */
  | { readonly kind: 'none' }
  /** Nothing to judge; a run waiting for late spans may be done, and the trace may be idle. */
  | { readonly kind: 'settle' }
  /** The run of `entry` is judged now. */
  | { readonly kind: 'judge'; readonly entry: SpanEntry }
  /** The run of `entry` has open descendants: it waits for them (or `lateSpanTimeoutMs`). */
  | { readonly kind: 'wait-late'; readonly entry: SpanEntry }
  /** The run of the span gets a record, not a verdict. */
  | { readonly kind: 'record-skipped'; readonly reason: SkipReason; readonly nested: boolean };

/**
 * Why a run is recorded and not judged: out of the sample; its trace lost spans to the limits
 * (or was evicted); or it matched no rule when it started and one as it ended, so its spans
 * were not held (recorded as `incomplete_trace`).
 */
export type SkipReason = 'sampled_out' | 'incomplete_trace' | 'matched_after_start';

export const NOTHING: SpanEnd = Object.freeze({ kind: 'none' });
export const SETTLE: SpanEnd = Object.freeze({ kind: 'settle' });

const RECORDS: Record<SkipReason, readonly [SpanEnd, SpanEnd]> = {
  sampled_out: records('sampled_out'),
  incomplete_trace: records('incomplete_trace'),
  matched_after_start: records('matched_after_start'),
};

function records(reason: SkipReason): readonly [SpanEnd, SpanEnd] {
  return [
    Object.freeze({ kind: 'record-skipped', reason, nested: false }),
    Object.freeze({ kind: 'record-skipped', reason, nested: true }),
  ];
}

/** The run of the ending span gets the record of `reason` (a shared constant). */
export function recordSkipped(reason: SkipReason, nested: boolean): SpanEnd {
  return RECORDS[reason][nested ? 1 : 0];
}

export function judge(entry: SpanEntry): SpanEnd {
  return { kind: 'judge', entry };
}

export function waitLate(entry: SpanEntry): SpanEnd {
  return { kind: 'wait-late', entry };
}
