/**
 * AI SDK 7 (`ai` 7.0.173 + `@ai-sdk/otel` 1.0.173, GenAI semconv spans), installed separately in
 * test/interop/next because it declares node >=22 (it runs on Node 20). Live runs are skipped
 * when that folder is not installed; the committed fixtures are always checked.
 */

import { describeInterop } from './describe-interop.js';
import { NEXT_INSTALLED } from './harness/run-scenario.js';

describeInterop('ai-sdk-v7', {
  isToolSpan: (span) => span.attributes['gen_ai.operation.name'] === 'execute_tool',
  liveAvailable: NEXT_INSTALLED,
});
