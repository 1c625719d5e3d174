/**
 * Prompts of the built-in `llm_judge` scorers (docs/semantics.md, "llm_judge").
 *
 * `tool_appropriateness` adapts Mastra's tool-selection judge
 * (`@mastra/evals` 1.10.2, `packages/evals/src/scorers/llm/tool-call-accuracy/prompts.ts`,
 * Apache-2.0): the same persona and strict criteria, but the judge sees every call with its
 * arguments (or their keys when values are redacted) and replies with plain JSON, because a
 * judge here is any text-in/text-out function rather than a structured-output model call.
 * `trajectory_grounding` is the trajectory evaluator's judge: are the
 * arguments what the user meant, and is the answer grounded in the tool results and does it
 * state the expected facts.
 */

/** What a prompt template can refer to as `{{name}}`. */
export interface JudgePromptInput {
  agent: string;
  userRequest: string;
  agentResponse: string;
  /** One line per call, already redacted. */
  toolCalls: string;
  /** Names of the calls in order, comma separated, or `None`. */
  toolNames: string;
  /** One line per offered tool (`name: description`), or `(not known)`. */
  tools: string;
  /** One line per expected fact, or `(none given)`. */
  answerFacts: string;
}

export const TOOL_APPROPRIATENESS_SYSTEM = `You are an expert evaluator specializing in AI agent tool selection analysis. Your role is to assess whether an agent chose appropriate tools based on explicit user requests.

CORE RESPONSIBILITIES:
- Analyze user requests to understand what was explicitly asked for
- Evaluate each tool call against the specific user need
- Identify missing tools that should have been used
- Apply strict evaluation criteria focused on direct relevance

EVALUATION PHILOSOPHY:
- Be precise and literal in your assessments
- Only approve tools that directly address the user's explicit request
- Distinguish between "helpful" and "appropriate" - reject tools that are merely helpful but not requested
- Consider context but prioritize what was actually asked for

OUTPUT REQUIREMENTS:
- Provide clear, specific reasoning for each evaluation
- Reply with one JSON object exactly in the format requested, and nothing else
- Be consistent in your evaluation standards`;

export const TOOL_APPROPRIATENESS_TEMPLATE = `You are evaluating whether an AI agent made appropriate tool choices for a user request.

USER REQUEST: "{{user_request}}"
AGENT RESPONSE: "{{agent_response}}"
TOOLS THE AGENT ACTUALLY CALLED: {{tool_names}}

CALLS IN ORDER:
{{tool_calls}}

TOOL REFERENCE:
{{tools}}

EVALUATION RULES:
1. If NO tools were called: judge whether that was right. Asking follow-up questions for a vague request is APPROPRIATE (missingTools stays empty); giving a generic answer without using an available tool, or ignoring a clear, specific request, is INAPPROPRIATE (name the tools that should have been used in missingTools).
2. If tools WERE called: evaluate each call against the EXPLICIT user request.

STRICT EVALUATION CRITERIA:
- Only mark a tool as appropriate if it DIRECTLY addresses what the user explicitly asked for
- Do NOT mark tools as appropriate just because they might be "helpful" or "related" to the domain
- Additional tools the agent decided to call without being asked should be marked inappropriate
- List in missingTools only tools from the reference that the request clearly needed and the agent did not call

Reply with JSON only, one evaluation per call in the order above:
{"evaluations":[{"toolCalled":"<tool name>","wasAppropriate":true,"reasoning":"<one sentence>"}],"missingTools":["<tool name>"]}`;

export const TRAJECTORY_GROUNDING_SYSTEM = `You are a strict evaluator of AI agent trajectories. You check two things: whether the arguments the agent passed to its tools are what the user meant, and whether the final answer is grounded in what the tools returned and states the expected facts. Do not reward answers that claim things no tool result supports. Reply with one JSON object exactly in the format requested, and nothing else.`;

export const TRAJECTORY_GROUNDING_TEMPLATE = `USER REQUEST: "{{user_request}}"

TOOL CALLS IN ORDER (arguments and results):
{{tool_calls}}

FINAL ANSWER: "{{agent_response}}"

FACTS THE ANSWER MUST CONVEY:
{{answer_facts}}

Decide:
- arg_semantic_pass: true when every tool argument matches what the user asked for (right entity, identifiers, amounts, dates), false otherwise.
- grounding_pass: true when every claim in the final answer is supported by the tool results and every fact above is conveyed, false otherwise.
- missing_facts: the facts above that the answer does not convey (copy their text), or [].

Reply with JSON only:
{"arg_semantic_pass":true,"grounding_pass":true,"missing_facts":[],"reason":"<one sentence>"}`;

/** Appended to a custom template so the reply can be read. */
export const CUSTOM_REPLY_INSTRUCTIONS = `

Reply with JSON only: {"passed":true,"score":1,"reason":"<one sentence>"} (score in [0, 1], optional).`;

export const CUSTOM_DEFAULT_SYSTEM = `You are a strict evaluator of AI agent runs. Reply with one JSON object exactly in the format requested, and nothing else.`;

/** Sent with the second attempt when the first reply could not be read. */
export function retryNote(problem: string): string {
  return `\n\nYour previous reply could not be used (${problem}). Reply again with the JSON object only, no prose and no code fences.`;
}

const PLACEHOLDER = /\{\{\s*([a-z_]+)\s*\}\}/g;

const KEYS: Record<string, keyof JudgePromptInput> = {
  agent: 'agent',
  user_request: 'userRequest',
  agent_response: 'agentResponse',
  tool_calls: 'toolCalls',
  tool_names: 'toolNames',
  tools: 'tools',
  answer_facts: 'answerFacts',
};

/** Fills `{{user_request}}`-style placeholders; unknown placeholders stay as written. */
export function renderTemplate(template: string, input: JudgePromptInput): string {
  return template.replace(PLACEHOLDER, (whole, key: string) => {
    const field = KEYS[key];
    return field === undefined ? whole : input[field];
  });
}

/** Placeholder names a custom template may use. */
export const TEMPLATE_PLACEHOLDERS: readonly string[] = Object.keys(KEYS);
