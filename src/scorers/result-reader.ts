import type { MisuseKind, ScorerResult } from '../types.js';

/**
 * What a scorer kind says about its own results, for the places that hold only results: the
 * explanation emitted under `redact.values` (events, reports) and the misuse a result shows
 * (counted by the gateway, which sees runs whole). Each kind that has more to say than the
 * default declares its reader beside its scorer (`scorers/result-readers.ts` lists them).
 */
export interface ResultReader {
  /**
   * The result's explanation without argument values: the label, then codes with the tool
   * and field they concern, and tool names — keys, never values.
   */
  explainRedacted(result: ScorerResult): string;
  /** The misuse the result shows. Default: none. */
  misuse?(result: ScorerResult): readonly ResultMisuse[];
}

export interface ResultMisuse {
  kind: MisuseKind;
  tool: string;
}

/**
 * The default explanation, and the convention for custom scorers: the label, then
 * `; code(tool.field)` for each `detail.errors` entry `{ code, tool?, field? }`.
 */
export function explainErrors(result: ScorerResult): string {
  // Built by concatenation: this runs for every result of every judged run.
  let text: string = result.label;
  const errors = result.detail?.errors;
  if (!Array.isArray(errors)) return text;
  for (const error of errors) {
    if (error === null || typeof error !== 'object') continue;
    const { code, tool, field } = error as { code?: unknown; tool?: unknown; field?: unknown };
    if (typeof code !== 'string') continue;
    let where = typeof tool === 'string' ? tool : '';
    if (typeof field === 'string') where = typeof tool === 'string' ? `${where}.${field}` : field;
    text += where ? `; ${code}(${where})` : `; ${code}`;
  }
  return text;
}

/** `text`, then the tool names of `detail.missing_tool_calls` and `detail.additional_tool_calls`. */
export function appendToolLists(text: string, detail: Record<string, unknown> | undefined | null): string {
  if (detail === undefined || detail === null) return text;
  return appendNames(
    appendNames(text, 'missing_tool_calls', detail.missing_tool_calls),
    'additional_tool_calls',
    detail.additional_tool_calls,
  );
}

/** `; key: a, b` for the string names of a non-empty list; the text unchanged otherwise. */
function appendNames(text: string, key: string, names: unknown): string {
  if (!Array.isArray(names) || names.length === 0) return text;
  let list = '';
  let first = true;
  for (const name of names) {
    if (typeof name !== 'string') continue;
    list = first ? name : `${list}, ${name}`;
    first = false;
  }
  return `${text}; ${key}: ${list}`;
}
