import type { PrometheusRegistry } from './prometheus-registry.js';

/** Adds `value` (default 1) to the series of `labels`. */
type Count = ReturnType<PrometheusRegistry['counter']>;

/** The gateway's own counters (docs/metrics.md), each named for what it counts. */
export interface GatewayCounters {
  received: Count;
  requests: Count;
  rejected: Count;
  forwarded: Count;
  retries: Count;
  deadLettered: Count;
  unconfirmed: Count;
  dropped: Count;
  late: Count;
  conflicts: Count;
  unjudged: Count;
  traces: Count;
  verdicts: Count;
  unmatched: Count;
}

/** Registers the gateway's counters on `r`, in the order `/metrics` lists them. */
export function gatewayCounters(r: PrometheusRegistry): GatewayCounters {
  return {
    received: r.counter('toolwatch_gateway_spans_received_total', 'Spans accepted, by transport.'),
    requests: r.counter('toolwatch_gateway_requests_total', 'Export requests, by transport and outcome.'),
    rejected: r.counter(
      'toolwatch_gateway_spans_rejected_total',
      'Spans refused (the sender was told), by reason.',
    ),
    forwarded: r.counter('toolwatch_gateway_spans_forwarded_total', 'Spans forwarded, by endpoint.'),
    retries: r.counter(
      'toolwatch_gateway_forward_retries_total',
      'Forwarding retries, by endpoint and reason.',
    ),
    deadLettered: r.counter(
      'toolwatch_gateway_spans_dead_lettered_total',
      'Accepted spans that could not be forwarded after retries, by endpoint and reason.',
    ),
    unconfirmed: r.counter(
      'toolwatch_gateway_spans_unconfirmed_total',
      'Spans sent whole to an endpoint that never answered (timeout, or shutdown while waiting): it may have them; not re-sent, by endpoint and reason.',
    ),
    dropped: r.counter('toolwatch_gateway_spans_dropped_total', 'Accepted spans not forwarded, by reason.'),
    late: r.counter(
      'toolwatch_gateway_late_spans_total',
      'Spans that arrived after their trace was judged (forwarded unjudged).',
    ),
    conflicts: r.counter(
      'toolwatch_gateway_span_id_conflicts_total',
      'Spans that arrived under the id of another span of their trace with other content: judged, forwarded, and marked on the verdict (toolwatch.evaluation.span_id_conflicts).',
    ),
    unjudged: r.counter(
      'toolwatch_gateway_spans_undecodable_total',
      'Spans forwarded unjudged because they could not be decoded.',
    ),
    traces: r.counter(
      'toolwatch_gateway_traces_judged_total',
      'Traces judged, by completion (quiet, max_wait, span_limit, shutdown).',
    ),
    verdicts: r.counter(
      'toolwatch_gateway_verdicts_total',
      'Verdicts written onto forwarded spans, by rule and passed.',
    ),
    unmatched: r.counter(
      'toolwatch_gateway_agent_runs_unmatched_total',
      'Outermost agent runs no rule matched, by agent name (a nested run is part of its outermost run).',
    ),
  };
}
