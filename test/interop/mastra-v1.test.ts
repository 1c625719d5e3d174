/**
 * Mastra 1.71 (@mastra/observability 1.17.9 + @mastra/otel-exporter 1.4.0, GenAI semconv spans),
 * installed separately in test/interop/next because it declares node >=22.13 (it runs on Node 20).
 * Live runs are skipped when that folder is not installed; the committed fixtures are always checked.
 */

import { describeInterop } from './describe-interop.js';
import { NEXT_INSTALLED } from './harness/run-scenario.js';

describeInterop('mastra-v1', {
  isToolSpan: (span) => span.attributes['gen_ai.operation.name'] === 'execute_tool',
  // A schema-rejected call still gets an execute_tool span (status OK, result {"error": true, …}).
  toolSpansWithoutExecution: { invalid_input: 1 },
  liveAvailable: NEXT_INSTALLED,
});
