import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

/** Replaces local paths in stack traces and messages so fixtures do not depend on the machine. */
function scrub(text: string, roots: readonly string[]): string {
  let out = text;
  for (const root of roots) out = out.split(root).join('<cwd>');
  return out.replace(/file:\/\/<cwd>/g, '<cwd>');
}

function scrubDeep(value: unknown, roots: readonly string[]): unknown {
  if (typeof value === 'string') return scrub(value, roots);
  if (Array.isArray(value)) return value.map((v) => scrubDeep(v, roots));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrubDeep(v, roots)]));
  }
  return value;
}

/**
 * Serializes finished spans as one OTLP/JSON `ExportTraceServiceRequest` (hex ids, string
 * nanosecond timestamps), exactly as the OTLP/HTTP JSON exporter would send them.
 * `roots` are path prefixes replaced by `<cwd>`.
 */
export function spansToOtlpJson(spans: readonly ReadableSpan[], roots: readonly string[] = []): unknown {
  const bytes = JsonTraceSerializer.serializeRequest([...spans]);
  if (!bytes) throw new Error('OTLP serializer returned nothing');
  const request: unknown = JSON.parse(new TextDecoder().decode(bytes));
  return scrubDeep(request, roots);
}
