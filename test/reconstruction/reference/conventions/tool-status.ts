import {
  ATTR_ERROR_MESSAGE,
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_TOOL_CALL_DECISION_OUTCOME,
  ATTR_MASTRA_ERROR,
  ATTR_MASTRA_TOOL_SUCCESS,
  ATTR_PYDANTIC_AI_DEFERRAL_NAME,
  ATTR_PYDANTIC_AI_TOOL_FAILURE_STAGE,
  ATTR_TOOLWATCH_TOOL_STATUS,
} from '../../../../src/semconv.js';
import type { SpanLike, ToolStatus } from '../../../../src/types.js';
import { readFalse, readString, readTrue } from './read-values.js';

export interface StatusFacts {
  status: ToolStatus;
  errorType?: string;
  errorMessage?: string;
}

/**
 * OpenAI Agents writes these when a human rejects a tool call; through OpenInference the
 * span is an ordinary ERROR span, so only the text tells a refusal from a failure.
 */
const REJECTION_TEXTS = ['was manually rejected by user', 'Tool execution was not approved'];

export function isRejectionText(text: string | undefined): boolean {
  if (!text) return false;
  for (const t of REJECTION_TEXTS) if (text.includes(t)) return true;
  return false;
}

const REJECTED_CALL_ID = /Tool execution for (\S+?) was manually rejected by user/;

/** The call id OpenAI Agents leaks into its rejection text, if any. */
export function callIdFromRejection(text: string | undefined): string | undefined {
  if (!text) return undefined;
  return REJECTED_CALL_ID.exec(text)?.[1];
}

/**
 * Status of a tool span, in order of precedence: toolwatch's explicit
 * `toolwatch.tool.status`; paused (Pydantic deferral, approval required); refused (decision
 * deny, rejection text); error (status ERROR, `error.type`, `gen_ai.tool.success=false`,
 * `error=true`); ok. `texts` are extra places a framework writes a rejection (outputs).
 */
export function readToolStatus(span: SpanLike, texts: Array<string | undefined> = []): StatusFacts {
  const a = span.attributes;
  const attrErrorType = readString(a[ATTR_ERROR_TYPE]);
  const errorType = attrErrorType ?? exceptionField(span, 'exception.type');
  const errorMessage =
    readString(span.status?.message) ??
    readString(a[ATTR_ERROR_MESSAGE]) ??
    exceptionField(span, 'exception.message');

  const explicit = readString(a[ATTR_TOOLWATCH_TOOL_STATUS]);
  if (explicit === 'ok') return { status: 'ok' };
  if (explicit === 'error' || explicit === 'refused' || explicit === 'paused') {
    return withError(explicit, errorType, errorMessage);
  }
  if (readString(a[ATTR_PYDANTIC_AI_DEFERRAL_NAME]) !== undefined)
    return withError('paused', errorType, errorMessage);
  const outcome = readString(a[ATTR_GEN_AI_TOOL_CALL_DECISION_OUTCOME]);
  if (outcome === 'require_approval') return withError('paused', errorType, errorMessage);
  if (outcome === 'deny') return withError('refused', errorType, errorMessage);
  if (isRejectionText(errorMessage)) return withError('refused', errorType, errorMessage);
  for (const t of texts) if (isRejectionText(t)) return withError('refused', errorType, errorMessage);

  const failed =
    span.status?.code === 2 ||
    attrErrorType !== undefined ||
    readFalse(a[ATTR_MASTRA_TOOL_SUCCESS]) ||
    readTrue(a[ATTR_MASTRA_ERROR]);
  return failed ? withError('error', errorType, errorMessage) : { status: 'ok' };
}

// A module function, not a closure: this runs for every tool span.
function withError(
  status: ToolStatus,
  errorType: string | undefined,
  errorMessage: string | undefined,
): StatusFacts {
  const out: StatusFacts = { status };
  if (errorType !== undefined) out.errorType = errorType;
  if (errorMessage !== undefined) out.errorMessage = errorMessage;
  return out;
}

function exceptionField(span: SpanLike, key: string): string | undefined {
  const events = span.events;
  if (!Array.isArray(events)) return undefined;
  for (const e of events) {
    if (e?.name === 'exception') {
      const v = readString(e.attributes?.[key]);
      if (v !== undefined) return v;
    }
  }
  return undefined;
}

/** Texts of frameworks that open a tool span for a call they then refuse to run. */
const NOT_RUN_TEXTS = ['InvalidToolInputError', 'Invalid JSON input for tool', 'Invalid input for tool'];

/**
 * True when the span records a call rejected before the tool ran: OpenAI Agents' invalid
 * JSON input, Pydantic AI's `pydantic_ai.tool.failure_stage = validation`.
 */
export function wasNotRun(span: SpanLike, texts: Array<string | undefined> = []): boolean {
  if (span.attributes[ATTR_PYDANTIC_AI_TOOL_FAILURE_STAGE] === 'validation') return true;
  if (span.status?.code !== 2) return false;
  for (const t of [span.status.message, ...texts]) {
    if (!t) continue;
    for (const marker of NOT_RUN_TEXTS) if (t.includes(marker)) return true;
  }
  return false;
}
