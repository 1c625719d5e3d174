import YAML from 'yaml';
import { PyFloat } from '../util/python-json.js';
import type { PolicyProblem } from './policy-error.js';

/**
 * Parses policy text (YAML, or JSON, which YAML 1.2 reads the same way) into plain values.
 * Numbers written as floats (`1.0`, `2.5`, `1e3`, `.inf`) become `PyFloat`, so argument
 * values keep Python's int/float distinction and scorer digests match agno's.
 */
export function readPolicyText(text: string): { value: unknown; problems: PolicyProblem[] } {
  const doc = YAML.parseDocument(text, { keepSourceTokens: true, uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    return {
      value: undefined,
      problems: doc.errors.map((e) => ({ path: '', message: firstLine(e.message) })),
    };
  }
  YAML.visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value !== 'number') return;
      if (node.format === 'HEX' || node.format === 'OCT') return;
      const source = (node.srcToken as { source?: string } | undefined)?.source ?? '';
      if (/[.eE]|inf|nan/i.test(source)) (node as { value: unknown }).value = new PyFloat(node.value);
    },
  });
  return { value: doc.toJS({ maxAliasCount: 100 }), problems: [] };
}

function firstLine(message: string): string {
  return message.split('\n')[0]!.trim();
}
