// docs/policy.md is the policy reference: every key a policy file accepts must be in its
// tables, and every key its tables name must exist, so a key added to a schema cannot go
// undocumented (and a removed one cannot linger).
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { policySchema } from '../../src/policy/policy-schema.js';
import { SCORER_KINDS } from '../../src/policy/scorer-kinds.js';
import { codeSpans, markedTable, page } from './doc-tables.js';

const reference = page('docs/policy.md');

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  options?: z.ZodType[];
  element?: z.ZodType;
  valueType?: z.ZodType;
}
const def = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The object schemas a schema can be, through optional, default, nullable, pipes and unions. */
function objectsOf(schema: z.ZodType): Array<Record<string, z.ZodType>> {
  const d = def(schema);
  switch (d.type) {
    case 'object':
      return [d.shape!];
    case 'optional':
    case 'default':
    case 'nullable':
    case 'prefault':
    case 'readonly':
      return objectsOf(d.innerType!);
    case 'pipe':
      return [...objectsOf(d.in!), ...objectsOf(d.out!)];
    case 'union':
      return d.options!.flatMap(objectsOf);
    default:
      return [];
  }
}

/** Like `objectsOf`, for the elements of an array schema. */
function elementObjectsOf(schema: z.ZodType): Array<Record<string, z.ZodType>> {
  let d = def(schema);
  while (d.type === 'optional' || d.type === 'default' || d.type === 'nullable') d = def(d.innerType!);
  return d.type === 'array' ? objectsOf(d.element!) : [];
}

/** Every key path of a schema: `sampling.ratio`, `rules[].match.agent`; `stop` paths are leaves. */
function keyPaths(shape: Record<string, z.ZodType>, prefix = '', stop: string[] = []): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(shape)) {
    const path = prefix + key;
    out.push(path);
    if (stop.includes(path)) continue;
    for (const inner of objectsOf(value)) out.push(...keyPaths(inner, `${path}.`, stop));
    for (const inner of elementObjectsOf(value)) out.push(...keyPaths(inner, `${path}[].`, stop));
  }
  return [...new Set(out)];
}

/** Keys a reference table documents (the first cell's backticked names). */
function documented(marker: string): string[] {
  return markedTable(reference, marker).flatMap((row) => codeSpans(row[0]!));
}

/**
 * Every schema path is documented, except objects whose every key is (a documented
 * `sampling.ratio` covers `sampling`); every documented path is a schema path.
 */
function expectSameKeys(schemaPaths: string[], docPaths: string[], what: string): void {
  const leaves = schemaPaths.filter(
    (p) => !schemaPaths.some((q) => q.startsWith(`${p}.`)) || docPaths.includes(p),
  );
  expect(
    leaves.filter((p) => !docPaths.includes(p)),
    `${what}: keys missing from docs/policy.md`,
  ).toEqual([]);
  expect(
    docPaths.filter((p) => !schemaPaths.includes(p)),
    `${what}: docs/policy.md names keys the schema does not have`,
  ).toEqual([]);
}

describe('docs/policy.md documents every key of the policy schema', () => {
  it('top-level keys, rules and match (gates have their own table)', () => {
    const paths = keyPaths(policySchema.shape, '', ['gates']);
    expect(paths).toContain('rules[].match.root_only');
    expectSameKeys(paths, documented('keys: policy'), 'policy');
  });

  it.each(Object.keys(SCORER_KINDS))('the %s scorer', (kind) => {
    const [shape] = objectsOf(SCORER_KINDS[kind]!.schema);
    const paths = keyPaths(shape!, '', ['arg_constraints', 'expected_tool_call_arguments', 'arguments']);
    expect(paths).toContain('kind');
    expectSameKeys(paths, documented(`keys: ${kind}`), kind);
    expect(reference).toContain(`### \`${kind}\``);
  });

  it('every argument operator of arg_constraints', () => {
    const [trajectory] = objectsOf(SCORER_KINDS.trajectory!.schema);
    // arg_constraints: { tool: { "field.path": rule } }
    let d = def(trajectory!.arg_constraints!);
    while (d.type !== 'record') d = def(d.innerType ?? d.in!);
    let fields = def(d.valueType!);
    while (fields.type !== 'record') fields = def(fields.innerType ?? fields.in!);
    const operators = Object.keys(objectsOf(fields.valueType!)[0]!);
    expect(operators).toContain('matches');
    expect(documented('keys: arg_rule').sort()).toEqual(operators.sort());
  });

  it('every gate, with the keys of its shape', () => {
    const [gates] = objectsOf(policySchema.shape.gates);
    const rows = markedTable(reference, 'keys: gates');
    expect(rows.flatMap((r) => codeSpans(r[0]!)).sort()).toEqual(Object.keys(gates!).sort());
    for (const row of rows) {
      const gate = codeSpans(row[0]!)[0]!;
      const keys = Object.keys(objectsOf(gates![gate]!)[0]!);
      const shape = `\`{ ${keys.join(', ')} }\``;
      expect(row[1]!.startsWith(shape), `${gate}: ${row[1]} should start with ${shape}`).toBe(true);
    }
  });
});
