import { z } from 'zod';
import type { AgentRun, ScorerResult, SyncScorer } from '../types.js';
import { configDigest } from '../util/digest.js';
import { listPreview } from '../util/list-preview.js';
import { errorResult } from './scorer-result.js';

/**
 * `tool_order`: Mastra's `createToolCallAccuracyScorerCode` (`@mastra/evals` 1.10.2) on the
 * calls of a reconstructed run (docs/semantics.md, "tool_order").
 */

export const TOOL_ORDER_KIND = 'tool_order';

export type OrderSemantics = 'mastra' | 'subsequence';

export interface ToolOrderOptions {
  /** Result name. Default `tool_order`. */
  name?: string;
  /** The tool that must be called (single-tool mode; ignored for the score when `expectedToolOrder` is non-empty). */
  expectedTool?: string;
  /** Tools that must be called in this order. */
  expectedToolOrder?: string[];
  /** Exact sequence / exactly one call. Default false. */
  strictMode?: boolean;
  /**
   * How flexible order is checked. Default `mastra`: first occurrences strictly increasing,
   * as Mastra does (so `[b, a, b]` fails `[a, b]` and repeated expectations never pass).
   * `subsequence`: the expected list is a subsequence of the calls.
   */
  orderSemantics?: OrderSemantics;
  /** Per-scorer sampling. Default ratio 1.0. */
  sampling?: { ratio: number };
}

/** The policy-file shape (snake_case). */
export const toolOrderConfigSchema = z
  .strictObject({
    kind: z.literal(TOOL_ORDER_KIND),
    name: z.string().min(1).optional(),
    expected_tool: z.string().optional(),
    expected_tool_order: z.array(z.string(), { error: 'expected array of strings' }).optional(),
    strict_mode: z.boolean().optional(),
    order_semantics: z.enum(['mastra', 'subsequence']).optional(),
    sampling: z.strictObject({ ratio: z.number().min(0).max(1) }).optional(),
  })
  .superRefine((config, ctx) => {
    // Mastra's test: an empty string is absent, an empty array is present.
    if (!config.expected_tool && !config.expected_tool_order) {
      ctx.addIssue({ code: 'custom', message: 'Either expectedTool or expectedToolOrder must be provided' });
    }
  });

export type ToolOrderConfig = z.infer<typeof toolOrderConfigSchema>;

/** Build the scorer from a parsed policy entry. */
export function toolOrderFromConfig(config: ToolOrderConfig): SyncScorer {
  return toolOrder({
    name: config.name,
    expectedTool: config.expected_tool,
    expectedToolOrder: config.expected_tool_order,
    strictMode: config.strict_mode,
    orderSemantics: config.order_semantics,
    sampling: config.sampling,
  });
}

/** Mastra's `checkToolOrder`. */
export function mastraCheckToolOrder(
  actual: readonly string[],
  expected: readonly string[],
  strict: boolean,
): boolean {
  if (strict) return sameSequence(actual, expected);
  let previous = -1;
  for (const name of expected) {
    const index = actual.indexOf(name);
    if (index === -1 || index <= previous) return false;
    previous = index;
  }
  return true;
}

function subsequenceCheckToolOrder(
  actual: readonly string[],
  expected: readonly string[],
  strict: boolean,
): boolean {
  if (strict) return sameSequence(actual, expected);
  let j = 0;
  for (let i = 0; i < actual.length && j < expected.length; i++) {
    if (actual[i] === expected[j]) j++;
  }
  return j === expected.length;
}

// Mastra compares JSON.stringify of both arrays; for arrays of strings that is element-wise equality.
function sameSequence(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function toolOrder(options: ToolOrderOptions): SyncScorer {
  const { expectedTool, expectedToolOrder } = options;
  const strictMode = options.strictMode ?? false;
  const orderSemantics: OrderSemantics = options.orderSemantics ?? 'mastra';
  if (!expectedTool && !expectedToolOrder)
    throw new Error('Either expectedTool or expectedToolOrder must be provided');
  if (orderSemantics !== 'mastra' && orderSemantics !== 'subsequence') {
    throw new Error(`order_semantics must be 'mastra' or 'subsequence', got ${String(orderSemantics)}`);
  }
  const expectedOrder = expectedToolOrder ? [...expectedToolOrder] : undefined;
  const check = orderSemantics === 'mastra' ? mastraCheckToolOrder : subsequenceCheckToolOrder;
  const name = options.name ?? TOOL_ORDER_KIND;
  const config: Record<string, unknown> = {
    kind: TOOL_ORDER_KIND,
    ...(expectedTool !== undefined ? { expected_tool: expectedTool } : {}),
    ...(expectedOrder !== undefined ? { expected_tool_order: expectedOrder } : {}),
    strict_mode: strictMode,
    order_semantics: orderSemantics,
  };
  const digest = configDigest(config);
  const how = strictMode
    ? 'exactly'
    : orderSemantics === 'mastra'
      ? 'in order (first occurrences)'
      : 'in order';
  // The reason's tail is the same for every run.
  const orderMismatch = expectedOrder ? `] do not follow [${listPreview(expectedOrder)}] ${how}` : '';

  const score = (run: AgentRun): ScorerResult => {
    // Mastra skips invocations without a name; the fallback id is `<message>-<invocation>`,
    // and a run's calls are one message here.
    const actualTools: string[] = [];
    const toolCallInfos: Array<{ toolName: string; toolCallId: string; spanId: string }> = [];
    run.calls.forEach((call, i) => {
      if (!call.name) return;
      actualTools.push(call.name);
      toolCallInfos.push({ toolName: call.name, toolCallId: call.callId || `0-${i}`, spanId: call.spanId });
    });
    const correctToolCalled = expectedTool
      ? strictMode
        ? actualTools.length === 1 && actualTools[0] === expectedTool
        : actualTools.includes(expectedTool)
      : false;
    const correctOrderCalled = expectedOrder ? check(actualTools, expectedOrder, strictMode) : null;
    let value: number;
    let reason: string | null = null;
    if (actualTools.length === 0) {
      value = 0;
      reason = 'no tool calls';
    } else if (expectedOrder && expectedOrder.length > 0) {
      value = correctOrderCalled ? 1 : 0;
      if (!value) {
        reason = `calls [${listPreview(actualTools)}${orderMismatch}`;
      }
    } else if (!expectedTool) {
      value = 0;
      reason = 'expected_tool_order is empty and no expected_tool is set';
    } else {
      value = correctToolCalled ? 1 : 0;
      if (!value) {
        reason =
          strictMode && actualTools.includes(expectedTool)
            ? `strict mode expects exactly one call of ${expectedTool}, got ${actualTools.length} calls`
            : `${expectedTool} was not called`;
      }
    }
    // Built key by key (same order) rather than from spread literals: no temporary objects.
    const detail: Record<string, unknown> = {};
    if (expectedTool !== undefined) detail.expectedTool = expectedTool;
    detail.actualTools = actualTools;
    detail.strictMode = strictMode;
    if (expectedOrder !== undefined) detail.expectedToolOrder = expectedOrder.slice();
    detail.hasToolCalls = actualTools.length > 0;
    detail.correctToolCalled = correctToolCalled;
    detail.toolCallInfos = toolCallInfos;
    detail.correctOrderCalled = correctOrderCalled;
    detail.orderSemantics = orderSemantics;
    return {
      scorer: name,
      kind: TOOL_ORDER_KIND,
      passed: value === 1,
      score: value,
      label: value === 1 ? 'pass' : 'fail',
      reason,
      digest,
      detail,
    };
  };

  const scorer: SyncScorer = {
    name,
    kind: TOOL_ORDER_KIND,
    digest,
    async: false,
    ...(options.sampling ? { sampling: { ratio: options.sampling.ratio } } : {}),
    config,
    // Names only.
    argumentsRead: NO_TOOLS,
    score(run: AgentRun): ScorerResult {
      try {
        return score(run);
      } catch (e) {
        return errorResult({ name, kind: TOOL_ORDER_KIND, digest }, e);
      }
    },
  };
  return scorer;
}

const NO_TOOLS: ReadonlySet<string> = new Set();
