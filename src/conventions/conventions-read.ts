/**
 * The span conventions toolwatch reads agent runs from, as a user would look for them in
 * their spans (the adapters of `classify.ts`, in the order they are asked): said when an
 * input holds spans but no agent run, so "my spans are not understood" is told apart from
 * "my rule's glob is wrong".
 */
export const CONVENTIONS_READ: readonly string[] = [
  'OpenTelemetry GenAI semantic conventions (gen_ai.operation.name invoke_agent / execute_tool)',
  'Mastra (gen_ai.operation.name agent.run / tool.execute)',
  'Vercel AI SDK (ai.generateText / ai.streamText / ai.toolCall spans)',
  'OpenInference (openinference.span.kind AGENT / TOOL)',
  'Traceloop OpenLLMetry (traceloop.span.kind agent / tool)',
];
