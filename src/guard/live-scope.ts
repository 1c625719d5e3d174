import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { LiveAgent } from './live-misuse.js';

/**
 * An agent run as the live checks see it while it goes on: its span, whether it is still
 * open, the run it is a member of, and its live counts. The processor's agent entries are
 * ones; the live checks read nothing else of them.
 */
export interface LiveScope {
  readonly spanId: string;
  /** The agent span (kept while the run is open): its identity is read on the first check. */
  readonly span: ReadableSpan | undefined;
  readonly open: boolean;
  /** The enclosing run, when this one is nested. */
  readonly agent: LiveScope | undefined;
  /** The live counts, set by the live checks on the first check (null: no rule with limits applies). */
  live: LiveAgent | null | undefined;
}

/** The open runs a span is part of, as the live checks count them. */
export interface LiveRunsAt {
  /** Innermost first: the run the span is in, then each run enclosing it. Only runs some rule with limits matches. */
  agents: LiveAgent[];
  /** The span itself when it is a tool span (a call running now, counted as in flight). */
  toolSpanId: string | undefined;
}
