/**
 * Vercel AI SDK 6 (`ai` 6.0.326, `MockLanguageModelV3`) run offline against toolwatch's
 * reconstruction: live spans and the committed OTLP/JSON fixtures.
 */
import { describeInterop } from './describe-interop.js';

describeInterop('ai-sdk', {
  isToolSpan: (span) => span.name === 'ai.toolCall',
  knownGaps: [
    // Reported: OTel JS spans start at Date.now() ms and end at start + a precise duration, so each
    // span is shifted by its own 0–1 ms; these recordings break time-based steps of reconstruction
    // (zero-tolerance "started after its agent ended" re-homing, LLM and call order by start time).
    'jitter:multi_step.jitter-order',
    'jitter:multi_step.jitter-lost',
    'jitter:subagent_as_tool.jitter-rehomed',
    'jitter:unknown_tool.jitter-paused',
    'jitter:invalid_input.jitter-lost',
    'jitter:invalid_input.jitter-order',
  ],
});
