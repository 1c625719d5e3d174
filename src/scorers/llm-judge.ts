import { z } from 'zod';
import type {
  AgentRun,
  JudgeFunction,
  JudgeRequest,
  RedactOptions,
  ScoreContext,
  Scorer,
  ScorerResult,
  ToolDefinition,
  ToolExecution,
} from '../types.js';
import { configDigest } from '../util/digest.js';
import { PyFloat } from '../util/python-json.js';
import {
  CUSTOM_DEFAULT_SYSTEM,
  CUSTOM_REPLY_INSTRUCTIONS,
  type JudgePromptInput,
  renderTemplate,
  retryNote,
  TEMPLATE_PLACEHOLDERS,
  TOOL_APPROPRIATENESS_SYSTEM,
  TOOL_APPROPRIATENESS_TEMPLATE,
  TRAJECTORY_GROUNDING_SYSTEM,
  TRAJECTORY_GROUNDING_TEMPLATE,
} from './judge-prompts.js';

export type JudgePromptKind = 'tool_appropriateness' | 'trajectory_grounding';

export type JudgePrompt = JudgePromptKind | { system?: string; template: string };

/**
 * The slice of an AI SDK `LanguageModelV2`/`V3` toolwatch uses. Duck-typed so that `ai` is
 * never imported at runtime.
 */
export interface LanguageModelLike {
  readonly specificationVersion: string;
  doGenerate(options: Record<string, unknown>): PromiseLike<unknown>;
}

export interface LlmJudgeOptions {
  /** Result name. Default `llm_judge`. */
  name?: string;
  /**
   * A built-in prompt, or a custom `{ system?, template }` whose template may use
   * `{{agent}}`, `{{user_request}}`, `{{agent_response}}`, `{{tool_calls}}`, `{{tool_names}}`,
   * `{{tools}}` and `{{answer_facts}}`; the judge then replies `{ passed, score?, reason? }`.
   */
  prompt: JudgePrompt;
  /** Facts the final answer must convey (`trajectory_grounding`). Default none. */
  answerFacts?: string[];
  /** Tools offered to the agent, for runs that carry no tool definitions. Default none. */
  tools?: Array<string | ToolDefinition>;
  /**
   * Name of a judge in the processor's `judges`, or the judge itself (a `JudgeFunction` or an
   * AI SDK language model). Default `default`.
   */
  judge?: string | JudgeFunction | LanguageModelLike;
  /** Fraction of runs judged (the policy's sampling). Default 0: only escalated runs. */
  sampling?: { ratio: number };
  /** Per judge call. Default 30 000 ms. */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;

const toolSchema = z.union([
  z.string().min(1),
  z.strictObject({ name: z.string().min(1), description: z.string().optional(), parameters: z.unknown() }),
]);

/** A number, or a `PyFloat` the policy loader made of a number written as a float. */
const num = z.union([z.number(), z.instanceof(PyFloat).transform((v) => v.value)]);

/** The `llm_judge` scorer as written in a policy file (snake_case, strict). */
export const llmJudgeConfigSchema = z.strictObject({
  kind: z.literal('llm_judge'),
  name: z.string().min(1).optional(),
  prompt: z.union(
    [
      z.enum(['tool_appropriateness', 'trajectory_grounding']),
      z.strictObject({
        system: z.string().optional(),
        template: z
          .string()
          .min(1)
          .superRefine((template, ctx) => {
            const unknown = unknownPlaceholders(template);
            if (unknown.length > 0) {
              ctx.addIssue({
                code: 'custom',
                message: `unknown placeholder ${unknown.map((u) => `{{${u}}}`).join(', ')} (known: ${TEMPLATE_PLACEHOLDERS.join(', ')})`,
              });
            }
          }),
      }),
    ],
    { error: 'expected tool_appropriateness, trajectory_grounding or { system?, template }' },
  ),
  answer_facts: z.array(z.string().min(1)).min(1).optional(),
  tools: z.array(toolSchema).min(1).optional(),
  judge: z.string().min(1).optional(),
  sampling: z.strictObject({ ratio: num.pipe(z.number().min(0).max(1)) }).optional(),
  timeout_ms: num.pipe(z.number().int().positive()).optional(),
});

export type LlmJudgeConfig = z.output<typeof llmJudgeConfigSchema>;

/** Builds the scorer from a validated policy entry. */
export function llmJudgeFromConfig(config: LlmJudgeConfig): Scorer {
  return llmJudge({
    ...(config.name !== undefined ? { name: config.name } : {}),
    prompt: config.prompt,
    ...(config.answer_facts ? { answerFacts: config.answer_facts } : {}),
    ...(config.tools ? { tools: config.tools as Array<string | ToolDefinition> } : {}),
    ...(config.judge !== undefined ? { judge: config.judge } : {}),
    ...(config.sampling ? { sampling: config.sampling } : {}),
    ...(config.timeout_ms !== undefined ? { timeoutMs: config.timeout_ms } : {}),
  });
}

const evaluationsReplySchema = z.object({
  evaluations: z.array(
    z.object({ toolCalled: z.string(), wasAppropriate: z.boolean(), reasoning: z.string().optional() }),
  ),
  missingTools: z.array(z.string()).optional(),
});

const groundingReplySchema = z.object({
  arg_semantic_pass: z.boolean(),
  grounding_pass: z.boolean(),
  missing_facts: z.array(z.string()).optional(),
  reason: z.string().optional(),
});

const customReplySchema = z.object({
  passed: z.boolean(),
  score: z.number().min(0).max(1).optional(),
  reason: z.string().optional(),
});

/**
 * An LLM judge (docs/semantics.md, "llm_judge"). Asynchronous: the evaluation pipeline runs it off the hot
 * path, only on sampled or escalated runs, under the policy's judge budgets. It never
 * throws: a judge that fails, times out or answers garbage twice yields label `error`.
 */
export function llmJudge(options: LlmJudgeOptions): Scorer {
  const name = options.name ?? 'llm_judge';
  const prompt = options.prompt;
  if (typeof prompt === 'string') {
    if (prompt !== 'tool_appropriateness' && prompt !== 'trajectory_grounding') {
      throw new Error(`unknown llm_judge prompt ${JSON.stringify(prompt)}`);
    }
  } else if (!prompt || typeof prompt.template !== 'string' || prompt.template === '') {
    throw new Error('a custom llm_judge prompt needs a non-empty template');
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const judgeName =
    typeof options.judge === 'string' ? options.judge : options.judge ? '(inline)' : 'default';
  const offered = (options.tools ?? []).map((t): ToolDefinition => (typeof t === 'string' ? { name: t } : t));
  const config: Record<string, unknown> = {
    kind: 'llm_judge',
    prompt: typeof prompt === 'string' ? prompt : { system: prompt.system, template: prompt.template },
    answer_facts: options.answerFacts ?? [],
    tools: offered.map((t) =>
      t.description === undefined ? t.name : { name: t.name, description: t.description },
    ),
    judge: judgeName,
    timeout_ms: timeoutMs,
  };
  const digest = configDigest(config);
  const sampling = { ratio: options.sampling?.ratio ?? 0 };

  const result = (partial: Omit<ScorerResult, 'scorer' | 'kind' | 'digest'>): ScorerResult => ({
    scorer: name,
    kind: 'llm_judge',
    digest,
    ...partial,
  });

  return {
    name,
    kind: 'llm_judge',
    digest,
    async: true,
    sampling,
    config,
    async score(run: AgentRun, context: ScoreContext = {}): Promise<ScorerResult> {
      try {
        return await scoreRun(run, context);
      } catch (err) {
        // Runs are data from the wire; nothing about one may turn into an exception.
        return errorResult(result, `llm_judge failed: ${errorMessage(err)}`, {});
      }
    },
  };

  async function scoreRun(run: AgentRun, context: ScoreContext): Promise<ScorerResult> {
    const judge =
      typeof options.judge === 'string' || options.judge === undefined
        ? context.judges?.[judgeName]
        : options.judge;
    const call = toCallable(judge);
    if (!call) {
      return errorResult(
        result,
        judge === undefined
          ? `no judge named "${judgeName}"`
          : `judge "${judgeName}" is neither a function nor a language model`,
        { attempts: 0 },
      );
    }
    const redact = context.redact ?? { values: false };
    const calls = run.calls;
    const input = promptInput(run, calls, offered, options.answerFacts ?? [], redact);
    const { system, template, schema } = promptParts(prompt);
    const request = renderTemplate(template, input);
    let raw: string | undefined;
    let problem = '';
    const scrub = redact.prompt;
    for (let attempt = 1; attempt <= 2; attempt++) {
      const text = attempt === 1 ? request : request + retryNote(problem);
      try {
        const sentSystem = scrub ? scrub(system) : system;
        const sentPrompt = scrub ? scrub(text) : text;
        raw = await withTimeout(
          (signal) => call({ system: sentSystem, prompt: sentPrompt, temperature: 0, signal }),
          timeoutMs,
          context.signal,
        );
      } catch (err) {
        return errorResult(result, `judge failed: ${errorMessage(err)}`, {
          attempts: attempt,
          raw: raw ?? null,
        });
      }
      const parsed = parseReply(raw, schema);
      if (parsed.ok) {
        return interpret(result, prompt, parsed.value, calls, { raw, attempts: attempt });
      }
      problem = parsed.problem;
    }
    return errorResult(result, `judge reply unreadable twice: ${problem}`, {
      attempts: 2,
      raw: raw ?? null,
    });
  }
}

type Make = (partial: Omit<ScorerResult, 'scorer' | 'kind' | 'digest'>) => ScorerResult;

function errorResult(make: Make, reason: string, detail: Record<string, unknown>): ScorerResult {
  return make({ passed: false, score: 0, label: 'error', reason, detail: { error: reason, ...detail } });
}

function promptParts(prompt: JudgePrompt): { system: string; template: string; schema: z.ZodType } {
  if (prompt === 'tool_appropriateness') {
    return {
      system: TOOL_APPROPRIATENESS_SYSTEM,
      template: TOOL_APPROPRIATENESS_TEMPLATE,
      schema: evaluationsReplySchema,
    };
  }
  if (prompt === 'trajectory_grounding') {
    return {
      system: TRAJECTORY_GROUNDING_SYSTEM,
      template: TRAJECTORY_GROUNDING_TEMPLATE,
      schema: groundingReplySchema,
    };
  }
  return {
    system: prompt.system ?? CUSTOM_DEFAULT_SYSTEM,
    template: prompt.template + CUSTOM_REPLY_INSTRUCTIONS,
    schema: customReplySchema,
  };
}

function interpret(
  make: Make,
  prompt: JudgePrompt,
  reply: unknown,
  calls: ToolExecution[],
  extra: { raw: string; attempts: number },
): ScorerResult {
  if (prompt === 'tool_appropriateness') {
    const { evaluations, missingTools = [] } = reply as z.infer<typeof evaluationsReplySchema>;
    const actualTools = calls.map((c) => c.name);
    const perCall = assignEvaluations(actualTools, evaluations);
    const appropriate = perCall.filter((e) => e?.wasAppropriate === true).length;
    // Unlike Mastra, the denominator is the calls that happened, so a judge that skips a call
    // cannot raise the score; with no calls the run is right unless a tool was missing.
    const score =
      actualTools.length === 0 ? (missingTools.length > 0 ? 0 : 1) : appropriate / actualTools.length;
    const passed = appropriate === actualTools.length && missingTools.length === 0;
    const notes: string[] = [];
    perCall.forEach((e, i) => {
      if (!e) notes.push(`call ${i + 1} (${actualTools[i]}) was not evaluated`);
      else if (!e.wasAppropriate)
        notes.push(`${e.toolCalled} was not appropriate${e.reasoning ? `: ${e.reasoning}` : ''}`);
    });
    if (missingTools.length > 0) notes.push(`missing tools: ${missingTools.join(', ')}`);
    return make({
      passed,
      score,
      label: passed ? 'pass' : 'fail',
      reason: notes.length > 0 ? notes.join('; ') : null,
      detail: { evaluations, missingTools, actualTools, appropriate, ...extra },
    });
  }
  if (prompt === 'trajectory_grounding') {
    const r = reply as z.infer<typeof groundingReplySchema>;
    const passed = r.arg_semantic_pass && r.grounding_pass;
    const score = (Number(r.arg_semantic_pass) + Number(r.grounding_pass)) / 2;
    return make({
      passed,
      score,
      label: passed ? 'pass' : 'fail',
      reason: r.reason ?? null,
      detail: {
        arg_semantic_pass: r.arg_semantic_pass,
        grounding_pass: r.grounding_pass,
        missing_facts: r.missing_facts ?? [],
        reason: r.reason ?? null,
        ...extra,
      },
    });
  }
  const r = reply as z.infer<typeof customReplySchema>;
  return make({
    passed: r.passed,
    score: r.score ?? (r.passed ? 1 : 0),
    label: r.passed ? 'pass' : 'fail',
    reason: r.reason ?? null,
    detail: { ...r, ...extra },
  });
}

type Evaluation = z.infer<typeof evaluationsReplySchema>['evaluations'][number];

/**
 * One evaluation per actual call: the next unused evaluation of that tool, else (a judge
 * that answered once for a tool called twice) the last one given for that tool.
 */
function assignEvaluations(actual: string[], evaluations: Evaluation[]): Array<Evaluation | undefined> {
  const used = new Set<number>();
  return actual.map((name) => {
    let fallback: Evaluation | undefined;
    for (let i = 0; i < evaluations.length; i++) {
      if (evaluations[i]!.toolCalled !== name) continue;
      if (!used.has(i)) {
        used.add(i);
        return evaluations[i];
      }
      fallback = evaluations[i];
    }
    return fallback;
  });
}

type Callable = (request: JudgeRequest) => Promise<string>;

function isLanguageModel(value: unknown): value is LanguageModelLike {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { doGenerate?: unknown }).doGenerate === 'function' &&
    typeof (value as { specificationVersion?: unknown }).specificationVersion === 'string'
  );
}

function toCallable(judge: unknown): Callable | undefined {
  if (typeof judge === 'function') {
    return async (request) => {
      const reply: unknown = await (judge as JudgeFunction)(request);
      if (typeof reply === 'string') return reply;
      // Judges wrapping structured-output APIs tend to hand back the parsed object.
      if (reply !== null && typeof reply === 'object') return JSON.stringify(reply);
      throw new Error(`judge returned ${reply === null ? 'null' : typeof reply}, not a string`);
    };
  }
  if (isLanguageModel(judge)) {
    return async (request) => {
      const out = (await judge.doGenerate({
        prompt: [
          { role: 'system', content: request.system },
          { role: 'user', content: [{ type: 'text', text: request.prompt }] },
        ],
        temperature: 0,
        abortSignal: request.signal,
      })) as { content?: Array<{ type: string; text?: string }>; text?: unknown };
      if (Array.isArray(out?.content)) {
        return out.content
          .filter((p) => p.type === 'text' && typeof p.text === 'string')
          .map((p) => p.text)
          .join('');
      }
      // LanguageModelV1 results carried the text directly.
      if (typeof out?.text === 'string') return out.text;
      throw new Error('language model returned no text');
    };
  }
  return undefined;
}

async function withTimeout(
  run: (signal: AbortSignal) => Promise<string>,
  timeoutMs: number,
  outer?: AbortSignal,
): Promise<string> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const onAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted) throw new Error('aborted');
  outer?.addEventListener('abort', onAbort, { once: true });
  try {
    return await Promise.race([
      run(controller.signal),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const error = new Error(`timed out after ${timeoutMs} ms`);
          reject(error);
          controller.abort(error);
        }, timeoutMs);
        // A hanging judge must not keep the application's process alive.
        timer.unref?.();
        controller.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onAbort);
  }
}

function unknownPlaceholders(template: string): string[] {
  const names = [...template.matchAll(/\{\{\s*([a-z_]+)\s*\}\}/g)].map((m) => m[1]!);
  return [...new Set(names.filter((n) => !TEMPLATE_PLACEHOLDERS.includes(n)))];
}

type ParseOutcome = { ok: true; value: unknown } | { ok: false; problem: string };

const FENCE = /```[a-zA-Z0-9_-]*\s*\n?([\s\S]*?)```/;

/** Code fences stripped, then the outermost `{…}`, parsed and validated. */
export function parseReply(raw: string, schema: z.ZodType): ParseOutcome {
  let text = raw.trim();
  const fenced = FENCE.exec(text);
  if (fenced) text = fenced[1]!.trim();
  const first = text.indexOf('{');
  const last = text.lastIndexOf('}');
  if (first === -1 || last < first) return { ok: false, problem: 'no JSON object in the reply' };
  let value: unknown;
  try {
    value = JSON.parse(text.slice(first, last + 1));
  } catch (err) {
    return { ok: false, problem: `invalid JSON: ${errorMessage(err)}` };
  }
  const checked = schema.safeParse(value);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    return { ok: false, problem: `${issue.path.join('.') || 'reply'}: ${issue.message}` };
  }
  return { ok: true, value: checked.data };
}

const MAX_VALUE_CHARS = 2_000;

function promptInput(
  run: AgentRun,
  calls: ToolExecution[],
  offered: ToolDefinition[],
  answerFacts: string[],
  redact: RedactOptions,
): JudgePromptInput {
  const tools = run.toolDefinitions && run.toolDefinitions.length > 0 ? run.toolDefinitions : offered;
  return {
    agent: run.agent,
    userRequest: messageText(run.input, 'first-user'),
    agentResponse: messageText(run.output, 'last-assistant'),
    toolCalls:
      calls.length === 0
        ? '(no tool calls)'
        : calls.map((c, i) => `${i + 1}. ${describeCall(c, redact)}`).join('\n'),
    toolNames: calls.length === 0 ? 'None' : calls.map((c) => c.name).join(', '),
    tools:
      tools.length === 0
        ? '(not known)'
        : tools.map((t) => (t.description ? `${t.name}: ${t.description}` : t.name)).join('\n'),
    answerFacts: answerFacts.length === 0 ? '(none given)' : answerFacts.map((f) => `- ${f}`).join('\n'),
  };
}

function describeCall(call: ToolExecution, redact: RedactOptions): string {
  const status = call.requestOnly
    ? `requested but never executed (${call.status})`
    : call.status === 'error'
      ? `error${call.errorMessage && !redact.values ? `: ${truncate(call.errorMessage)}` : ''}`
      : call.status;
  const args = call.args !== undefined ? call.args : call.argsRaw;
  let text = `${call.name} arguments ${showValue(args, redact)} -> ${status}`;
  if (call.result !== undefined) text += `; result ${showValue(call.result, redact)}`;
  return text;
}

/** With redaction, a value becomes the list of its keys (or its type), never its content. */
function showValue(value: unknown, redact: RedactOptions): string {
  if (value === undefined) return '(none)';
  if (redact.values) {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      return `with keys [${Object.keys(value).join(', ')}]`;
    }
    return Array.isArray(value)
      ? `[array of ${value.length}, redacted]`
      : `[${typeOfValue(value)}, redacted]`;
  }
  let text: string;
  try {
    text =
      typeof value === 'string'
        ? value
        : JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
  } catch {
    text = String(value);
  }
  return truncate(text);
}

function typeOfValue(value: unknown): string {
  return value === null ? 'null' : typeof value;
}

function truncate(text: string): string {
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}… (truncated)` : text;
}

/**
 * Text of the first user message (input) or the last assistant message (output), from the
 * message shapes conventions use: plain strings, GenAI `parts`, OpenAI/AI SDK `content`.
 */
function messageText(value: unknown, which: 'first-user' | 'last-assistant'): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') {
    const trimmed = value.trim();
    if (trimmed.startsWith('[') || trimmed.startsWith('{')) {
      try {
        return messageText(JSON.parse(trimmed), which);
      } catch {
        return truncate(value);
      }
    }
    return truncate(value);
  }
  if (!Array.isArray(value) && typeof value === 'object') {
    // AI SDK `ai.prompt`: `{ prompt }` or `{ system, messages }`.
    const v = value as { prompt?: unknown; messages?: unknown };
    if (typeof v.prompt === 'string' && which === 'first-user') return truncate(v.prompt);
    if (Array.isArray(v.messages)) return messageText(v.messages, which);
  }
  const messages = Array.isArray(value) ? value : [value];
  const wanted = which === 'first-user' ? 'user' : 'assistant';
  const ordered = which === 'first-user' ? messages : [...messages].reverse();
  for (const m of ordered) {
    if (!m || typeof m !== 'object') continue;
    const role = (m as { role?: unknown }).role;
    if (role !== undefined && role !== wanted) continue;
    const text = contentText(m);
    if (text) return truncate(text);
  }
  return '';
}

const TEXT_PART_TYPES = new Set(['text', 'input_text', 'output_text']);

function contentText(message: object): string {
  const m = message as { content?: unknown; parts?: unknown; text?: unknown };
  if (typeof m.content === 'string') return m.content;
  if (typeof m.text === 'string') return m.text;
  const parts = Array.isArray(m.parts) ? m.parts : Array.isArray(m.content) ? m.content : [];
  return parts
    .map((p: unknown) => {
      if (typeof p === 'string') return p;
      if (!p || typeof p !== 'object') return '';
      const part = p as { type?: unknown; content?: unknown; text?: unknown };
      if (part.type !== undefined && !TEXT_PART_TYPES.has(part.type as string)) return '';
      return typeof part.content === 'string' ? part.content : typeof part.text === 'string' ? part.text : '';
    })
    .filter((s: string) => s !== '')
    .join('\n');
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
