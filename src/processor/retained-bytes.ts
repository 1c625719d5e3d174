import type { Attributes } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

/**
 * What holding an ended span costs beyond its values: the entry, the converted view, its ids
 * and times (measured: about 0.5 KB of heap per held span of the bench's agent runs).
 */
const SPAN_OVERHEAD = 512;
const EVENT_OVERHEAD = 64;
/** Numbers and booleans. */
const SCALAR = 8;

/**
 * About how many bytes the processor keeps alive by holding `span` after it ended: its
 * attribute and event values (string lengths, which is what the application's payloads
 * weigh: arguments, results, model messages) plus a fixed overhead. Keys are left out: they
 * are the instrumentation's constant strings, shared by every span. A lower bound for text
 * outside Latin-1 (V8 stores it two bytes a character), close for the rest.
 */
export function retainedBytes(span: ReadableSpan): number {
  let bytes = SPAN_OVERHEAD + valueBytes(span.attributes);
  const events = span.events;
  for (let i = 0; i < events.length; i++) bytes += EVENT_OVERHEAD + valueBytes(events[i]!.attributes);
  return bytes;
}

function valueBytes(attributes: Attributes | undefined): number {
  let bytes = 0;
  for (const key in attributes) {
    const value = attributes[key];
    if (typeof value === 'string') bytes += value.length;
    else if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        bytes += typeof item === 'string' ? item.length : SCALAR;
      }
    } else bytes += SCALAR;
  }
  return bytes;
}
