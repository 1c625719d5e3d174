/**
 * Semantic-convention names used by toolwatch, in one place.
 *
 * The `gen_ai.*` names are a copy of unstable (Development) definitions from
 * open-telemetry/semantic-conventions-genai (v1.38–v1.42-dev); they may change upstream.
 * The other blocks name what other conventions (OpenInference, Vercel AI SDK ≤ 6, Mastra
 * 0.24, Traceloop, Pydantic AI, ADK) put on spans, and toolwatch's own namespace.
 */

// --- OTel GenAI ------------------------------------------------------------------------
export const ATTR_GEN_AI_OPERATION_NAME = 'gen_ai.operation.name' as const;
export const ATTR_GEN_AI_TOOL_NAME = 'gen_ai.tool.name' as const;
export const ATTR_GEN_AI_TOOL_CALL_ID = 'gen_ai.tool.call.id' as const;
export const ATTR_GEN_AI_TOOL_CALL_ARGUMENTS = 'gen_ai.tool.call.arguments' as const;
export const ATTR_GEN_AI_TOOL_CALL_RESULT = 'gen_ai.tool.call.result' as const;
export const ATTR_GEN_AI_TOOL_TYPE = 'gen_ai.tool.type' as const;
export const ATTR_GEN_AI_TOOL_DEFINITIONS = 'gen_ai.tool.definitions' as const;
export const ATTR_GEN_AI_AGENT_NAME = 'gen_ai.agent.name' as const;
export const ATTR_GEN_AI_AGENT_ID = 'gen_ai.agent.id' as const;
export const ATTR_GEN_AI_INPUT_MESSAGES = 'gen_ai.input.messages' as const;
export const ATTR_GEN_AI_OUTPUT_MESSAGES = 'gen_ai.output.messages' as const;
export const ATTR_GEN_AI_CONVERSATION_ID = 'gen_ai.conversation.id' as const;
/** Proposal, not verified as merged: `allow | deny | require_approval`. */
export const ATTR_GEN_AI_TOOL_CALL_DECISION_OUTCOME = 'gen_ai.tool.call.decision.outcome' as const;
export const ATTR_ERROR_TYPE = 'error.type' as const;
export const GEN_AI_OPERATION_NAME_VALUE_GENERATE_CONTENT = 'generate_content' as const;
export const GEN_AI_OPERATION_NAME_VALUE_TEXT_COMPLETION = 'text_completion' as const;
/** Span event of the decision proposal (carries `gen_ai.tool.call.decision.outcome`). */
export const EVENT_GEN_AI_TOOL_CALL_DECISION = 'gen_ai.tool.call.decision' as const;
// Google ADK: `<not specified>` call ids and the `execute_tool (merged)` duplicate span.
export const ATTR_ADK_TOOL_CALL_ARGS = 'gcp.vertex.agent.tool_call_args' as const;
export const ATTR_ADK_TOOL_RESPONSE = 'gcp.vertex.agent.tool_response' as const;
export const ADK_CALL_ID_NOT_SPECIFIED = '<not specified>' as const;
export const ADK_MERGED_TOOL_NAME = '(merged tools)' as const;
export const ATTR_ADK_LLM_REQUEST = 'gcp.vertex.agent.llm_request' as const;
export const ATTR_ADK_LLM_RESPONSE = 'gcp.vertex.agent.llm_response' as const;
/** Stable (OTel general): the error text some frameworks add next to `error.type` (Mastra). */
export const ATTR_ERROR_MESSAGE = 'error.message' as const;

export const GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL = 'execute_tool' as const;
export const GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT = 'invoke_agent' as const;
export const GEN_AI_OPERATION_NAME_VALUE_CHAT = 'chat' as const;

// Evaluation results (event + attributes).
export const EVENT_GEN_AI_EVALUATION_RESULT = 'gen_ai.evaluation.result' as const;
export const ATTR_GEN_AI_EVALUATION_NAME = 'gen_ai.evaluation.name' as const;
export const ATTR_GEN_AI_EVALUATION_SCORE_VALUE = 'gen_ai.evaluation.score.value' as const;
export const ATTR_GEN_AI_EVALUATION_SCORE_LABEL = 'gen_ai.evaluation.score.label' as const;
export const ATTR_GEN_AI_EVALUATION_EXPLANATION = 'gen_ai.evaluation.explanation' as const;

// --- OpenInference -----------------------------------------------------------------------
export const ATTR_OPENINFERENCE_SPAN_KIND = 'openinference.span.kind' as const;
export const ATTR_OI_TOOL_NAME = 'tool.name' as const;
export const ATTR_OI_INPUT_VALUE = 'input.value' as const;
export const ATTR_OI_OUTPUT_VALUE = 'output.value' as const;
export const ATTR_OI_GRAPH_NODE_ID = 'graph.node.id' as const;
export const ATTR_OI_GRAPH_NODE_PARENT_ID = 'graph.node.parent_id' as const;
export const ATTR_OI_AGENT_NAME = 'agent.name' as const;
export const ATTR_OI_TOOL_PARAMETERS = 'tool.parameters' as const;
export const ATTR_OI_TOOL_ID = 'tool.id' as const;
export const ATTR_OI_TOOL_CALL_ID = 'tool_call.id' as const;
export const ATTR_OI_GRAPH_NODE_NAME = 'graph.node.name' as const;
/** Prefixes of OpenInference's flattened messages (`llm.output_messages.0.message.tool_calls.0.tool_call.id`). */
export const ATTR_OI_LLM_OUTPUT_MESSAGES = 'llm.output_messages' as const;
export const ATTR_OI_LLM_INPUT_MESSAGES = 'llm.input_messages' as const;
export const ATTR_OI_LLM_TOOLS = 'llm.tools' as const;
export const OI_SPAN_KIND_TOOL = 'TOOL' as const;
export const OI_SPAN_KIND_AGENT = 'AGENT' as const;
export const OI_SPAN_KIND_LLM = 'LLM' as const;
export const OI_SPAN_KIND_CHAIN = 'CHAIN' as const;
export const ATTR_AGNO_AGENT_ID = 'agno.agent.id' as const;
export const ATTR_AGNO_TEAM_ID = 'agno.team.id' as const;

// --- Vercel AI SDK ≤ 6 -------------------------------------------------------------------
export const SPAN_AI_TOOL_CALL = 'ai.toolCall' as const;
export const ATTR_AI_TOOL_CALL_NAME = 'ai.toolCall.name' as const;
export const ATTR_AI_TOOL_CALL_ID = 'ai.toolCall.id' as const;
export const ATTR_AI_TOOL_CALL_ARGS = 'ai.toolCall.args' as const;
export const ATTR_AI_TOOL_CALL_INPUT = 'ai.toolCall.input' as const;
export const ATTR_AI_TOOL_CALL_RESULT = 'ai.toolCall.result' as const;
export const ATTR_AI_TOOL_CALL_OUTPUT = 'ai.toolCall.output' as const;
export const ATTR_AI_RESPONSE_TOOL_CALLS = 'ai.response.toolCalls' as const;
export const ATTR_AI_PROMPT_MESSAGES = 'ai.prompt.messages' as const;
export const ATTR_AI_PROMPT_TOOLS = 'ai.prompt.tools' as const;
export const ATTR_AI_TELEMETRY_FUNCTION_ID = 'ai.telemetry.functionId' as const;
export const ATTR_AI_OPERATION_ID = 'ai.operationId' as const;
export const SPAN_AI_GENERATE_TEXT = 'ai.generateText' as const;
export const SPAN_AI_STREAM_TEXT = 'ai.streamText' as const;
export const SPAN_AI_GENERATE_TEXT_DO_GENERATE = 'ai.generateText.doGenerate' as const;
export const SPAN_AI_STREAM_TEXT_DO_STREAM = 'ai.streamText.doStream' as const;
export const ATTR_AI_PROMPT = 'ai.prompt' as const;
export const ATTR_AI_RESPONSE_TEXT = 'ai.response.text' as const;

// --- Mastra 0.24 ---------------------------------------------------------------------------
export const ATTR_MASTRA_TOOL_INPUT = 'gen_ai.tool.input' as const;
export const ATTR_MASTRA_TOOL_OUTPUT = 'gen_ai.tool.output' as const;
export const ATTR_MASTRA_SPAN_TYPE = 'mastra.span.type' as const;
export const MASTRA_OPERATION_TOOL_EXECUTE = 'tool.execute' as const;
export const MASTRA_OPERATION_AGENT_RUN = 'agent.run' as const;
export const ATTR_MASTRA_TOOL_SUCCESS = 'gen_ai.tool.success' as const;
export const ATTR_MASTRA_SPAN_OUTPUT = 'output' as const;
export const ATTR_MASTRA_SPAN_INPUT = 'input' as const;
/** Mastra 0.24 marks failed tool spans with `error = true`. */
export const ATTR_MASTRA_ERROR = 'error' as const;
// Mastra 1.x (GenAI semconv exporter): tool calls live in the step output; unknown tools become client calls.
export const ATTR_MASTRA_MODEL_STEP_OUTPUT = 'mastra.model_step.output' as const;
export const ATTR_MASTRA_METADATA_ARGS = 'mastra.metadata.args' as const;
export const MASTRA_OPERATION_CLIENT_TOOL_CALL = 'client_tool_call' as const;

// --- Traceloop -----------------------------------------------------------------------------
export const ATTR_TRACELOOP_SPAN_KIND = 'traceloop.span.kind' as const;
export const ATTR_TRACELOOP_ENTITY_NAME = 'traceloop.entity.name' as const;
export const ATTR_TRACELOOP_ENTITY_INPUT = 'traceloop.entity.input' as const;
export const ATTR_TRACELOOP_ENTITY_OUTPUT = 'traceloop.entity.output' as const;
export const ATTR_TRACELOOP_WORKFLOW_NAME = 'traceloop.workflow.name' as const;
export const ATTR_TRACELOOP_LLM_REQUEST_TYPE = 'llm.request.type' as const;

// --- Pydantic AI ---------------------------------------------------------------------------
export const ATTR_PYDANTIC_AI_DEFERRAL_NAME = 'pydantic_ai.tool.deferral.name' as const;
export const ATTR_PYDANTIC_AI_NEW_MESSAGE_INDEX = 'pydantic_ai.new_message_index' as const;
export const ATTR_PYDANTIC_AI_ALL_MESSAGES = 'pydantic_ai.all_messages' as const;
export const ATTR_PYDANTIC_AI_TOOL_FAILURE_STAGE = 'pydantic_ai.tool.failure_stage' as const;
export const ATTR_LOGFIRE_MSG = 'logfire.msg' as const;
// Instrumentation version 2 (deprecated): `running tool` / `agent run` spans.
export const ATTR_PYDANTIC_AI_V2_TOOL_ARGUMENTS = 'tool_arguments' as const;
export const ATTR_PYDANTIC_AI_V2_TOOL_RESPONSE = 'tool_response' as const;
export const ATTR_PYDANTIC_AI_V2_AGENT_NAME = 'agent_name' as const;

// --- toolwatch -----------------------------------------------------------------------------
/** Set by frameworks that know a span replays history (agno `Message.from_history`). */
export const ATTR_TOOLWATCH_FROM_HISTORY = 'toolwatch.from_history' as const;
export const ATTR_TOOLWATCH_TOOL_STATUS = 'toolwatch.tool.status' as const;
export const ATTR_TOOLWATCH_EVALUATION_PASSED = 'toolwatch.evaluation.passed' as const;
export const ATTR_TOOLWATCH_EVALUATION_FAILED = 'toolwatch.evaluation.failed' as const;
export const ATTR_TOOLWATCH_EVALUATION_RULE = 'toolwatch.evaluation.rule' as const;
export const ATTR_TOOLWATCH_EVALUATION_POLICY_DIGEST = 'toolwatch.evaluation.policy_digest' as const;
export const ATTR_TOOLWATCH_KEEP = 'toolwatch.keep' as const;
/** Gateway: ids under which the trace held two spans with different content (all judged). */
export const ATTR_TOOLWATCH_EVALUATION_SPAN_ID_CONFLICTS = 'toolwatch.evaluation.span_id_conflicts' as const;
/**
 * On the agent span of a run that was matched but not judged, the reason (`sampled_out`): the
 * one attribute such a run carries. Its records are counted by `toolwatch.runs.skipped`.
 */
export const ATTR_TOOLWATCH_EVALUATION_SKIPPED = 'toolwatch.evaluation.skipped' as const;
export const ATTR_TOOLWATCH_SCORER_KIND = 'toolwatch.scorer.kind' as const;
export const ATTR_TOOLWATCH_SCORER_DIGEST = 'toolwatch.scorer.digest' as const;
export const ATTR_TOOLWATCH_RULE = 'toolwatch.rule' as const;
export const ATTR_TOOLWATCH_MISUSE_KIND = 'toolwatch.misuse.kind' as const;
/**
 * The guard's decision on a tool span (written only when a rule denies it): `deny`, with
 * `toolwatch.guard.enforced` true when the call was refused and never ran (reconstruction then
 * reads the span as a refused call), false when a rule only observes ("would deny").
 */
export const ATTR_TOOLWATCH_GUARD_DECISION = 'toolwatch.guard.decision' as const;
export const ATTR_TOOLWATCH_GUARD_ENFORCED = 'toolwatch.guard.enforced' as const;
export const ATTR_TOOLWATCH_GUARD_RULE = 'toolwatch.guard.rule' as const;
export const ATTR_TOOLWATCH_GUARD_KIND = 'toolwatch.guard.kind' as const;
/** The decision's reasons, joined with `; `: what the model was told. */
export const ATTR_TOOLWATCH_GUARD_REASON = 'toolwatch.guard.reason' as const;

export const METRIC_TOOLWATCH_EVALUATIONS = 'toolwatch.evaluations' as const;
export const METRIC_TOOLWATCH_EVALUATION_SCORE = 'toolwatch.evaluation.score' as const;
export const METRIC_TOOLWATCH_TOOL_EXECUTIONS = 'toolwatch.tool.executions' as const;
export const METRIC_TOOLWATCH_TOOL_MISUSE = 'toolwatch.tool.misuse' as const;
export const METRIC_TOOLWATCH_TOOL_GUARD_DECISIONS = 'toolwatch.tool.guard.decisions' as const;
export const METRIC_TOOLWATCH_JUDGE_CALLS = 'toolwatch.judge.calls' as const;
/** Matched runs that got a `skipped` record instead of a verdict, by rule and reason. */
export const METRIC_TOOLWATCH_RUNS_SKIPPED = 'toolwatch.runs.skipped' as const;
export const METRIC_TOOLWATCH_PROCESSOR_SPANS_DROPPED = 'toolwatch.processor.spans_dropped' as const;
export const METRIC_TOOLWATCH_PROCESSOR_TRACES_BUFFERED = 'toolwatch.processor.traces_buffered' as const;
/** Outermost agent runs no rule of the policy matched, by agent. */
export const METRIC_TOOLWATCH_RUNS_UNMATCHED = 'toolwatch.runs.unmatched' as const;
/** The OpenTelemetry SDK's attribute on the one series that takes every attribute set past a metric's cardinality limit. */
export const ATTR_OTEL_METRIC_OVERFLOW = 'otel.metric.overflow' as const;
/** `toolwatch.judge.calls`: how a judge call ended. */
export const ATTR_OUTCOME = 'outcome' as const;
/** `toolwatch.processor.spans_dropped`: why spans were not held; `toolwatch.runs.skipped`: why a run was not judged. */
export const ATTR_REASON = 'reason' as const;
