/**
 * LangChain.js 1.5 `createAgent` (LangGraph 1.7, `fakeModel()`) through the OpenInference
 * callback tracer 4.1.1, run offline against toolwatch's reconstruction.
 */
import { describeInterop } from './describe-interop.js';

describeInterop('langchain', {
  isToolSpan: (span) => span.attributes['openinference.span.kind'] === 'TOOL',
});
