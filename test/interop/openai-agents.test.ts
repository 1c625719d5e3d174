/**
 * OpenAI Agents SDK 0.14.3 through the OpenInference bridge 0.2.15 (scripted `Model` that
 * opens its own generation span) run offline against toolwatch's reconstruction.
 */
import { describeInterop } from './describe-interop.js';

describeInterop('openai-agents', {
  isToolSpan: (span) => span.attributes['openinference.span.kind'] === 'TOOL',
  // Arguments that fail the schema get a function span (ERROR, InvalidToolInputError), yet the tool never runs.
  toolSpansWithoutExecution: { invalid_input: 1 },
});
