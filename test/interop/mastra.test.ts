/**
 * Mastra 0.24.9 (AI tracing through @mastra/otel-exporter 0.3.3, scripted LanguageModelV2) run
 * offline against toolwatch's reconstruction: live spans and the committed OTLP/JSON fixtures.
 */
import { describeInterop } from './interop-suite.js';

describeInterop('mastra', {
  isToolSpan: (span) => span.name.startsWith('tool.execute '),
});
