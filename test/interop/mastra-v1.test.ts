/**
 * Mastra 1.71 (@mastra/observability 1.17.9 + @mastra/otel-exporter 1.4.0, GenAI semconv spans),
 * installed separately in test/interop/next because it declares node >=22.13 (it runs on Node 20).
 * Live runs are skipped when that folder is not installed; the committed fixtures are always checked.
 */
import { NEXT_INSTALLED } from './harness/run-scenario.js';
import { describeInterop } from './interop-suite.js';

describeInterop('mastra-v1', {
  isToolSpan: (span) => span.attributes['gen_ai.operation.name'] === 'execute_tool',
  // A schema-rejected call still gets an execute_tool span (status OK, result {"error": true, …}).
  toolSpansWithoutExecution: { invalid_input: 1 },
  liveAvailable: NEXT_INSTALLED,
  knownGaps: [
    // Reported: the only evidence of the unknown tool is a `client_tool_call launchRockets` span
    // (gen_ai.operation.name=client_tool_call, args in mastra.metadata.args); the chat span's
    // gen_ai.output.messages drops the call, so no request is found.
    'live:unknown_tool',
    'fixture:unknown_tool',
    // Reported: the schema-rejected call's execute_tool span is status OK with
    // gen_ai.tool.call.result {"error":true,"message":"Tool input validation failed for getWeather…"};
    // the tool never ran, reconstruction reports an ok execution.
    'live:invalid_input',
    'fixture:invalid_input',
  ],
});
