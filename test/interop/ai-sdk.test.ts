/**
 * Vercel AI SDK 6 (`ai` 6.0.326, `MockLanguageModelV3`) run offline against toolwatch's
 * reconstruction: live spans and the committed OTLP/JSON fixtures.
 */
import { describeInterop } from './describe-interop.js';

describeInterop('ai-sdk', {
  isToolSpan: (span) => span.name === 'ai.toolCall',
});
