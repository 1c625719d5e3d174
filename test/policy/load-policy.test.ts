import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { loadPolicy, parsePolicyText } from '../../src/policy/load-policy.js';
import { PolicyError } from '../../src/policy/policy-error.js';
import { readPolicyText } from '../../src/policy/read-policy-text.js';
import { toolCallsDigest } from '../../src/scorers/tool-calls.js';
import { PyFloat, pythonJsonDumps } from '../../src/util/python-json.js';

const fixtures = new URL('../fixtures/policies/', import.meta.url);

describe('readPolicyText', () => {
  it('wraps numbers written as floats in PyFloat and leaves ints alone', () => {
    const { value, problems } = readPolicyText('a: 1.0\nb: [1, 2.5, 1e3, 0x10]\nc: {"x": 1.50}\n');
    expect(problems).toEqual([]);
    const v = value as { a: unknown; b: unknown[]; c: { x: unknown } };
    expect(v.a).toBeInstanceOf(PyFloat);
    expect(pythonJsonDumps(v)).toBe('{"a":1.0,"b":[1,2.5,1000.0,16],"c":{"x":1.5}}');
  });

  it('reports YAML syntax errors and duplicate keys as problems', () => {
    expect(readPolicyText('a: 1\na: 2\n').problems[0]!.message).toMatch(/unique/);
    expect(readPolicyText('a: [1, 2\n').problems.length).toBeGreaterThan(0);
  });
});

describe('loadPolicy', () => {
  it('loads the refunds example', async () => {
    const policy = await loadPolicy(
      new URL('../../examples/policies/refunds.yaml', import.meta.url).pathname,
    );
    expect(policy.rules.map((r) => r.name)).toEqual(['refunds']);
    expect(policy.rules[0]!.match).toEqual({
      agent: 'refund-*',
      rootOnly: true,
      attributes: { 'deployment.environment': 'prod' },
    });
    expect(policy.rules[0]!.scorers.map((s) => [s.name, s.kind, s.async])).toEqual([
      ['reliability', 'reliability', false],
      ['grounded', 'tool_calls', false],
      ['tool_order', 'tool_order', false],
      ['trajectory', 'trajectory', false],
      ['llm_judge', 'llm_judge', true],
    ]);
    expect(policy.rules[0]!.scorers[4]!.sampling).toEqual({ ratio: 0.05 });
    expect(policy.judge).toEqual({ maxPerMinute: 30, maxConcurrent: 2, escalateOn: ['failure'] });
    expect(policy.redact).toEqual({ values: true });
    expect(Object.keys(policy.gates)).toHaveLength(6);
  });

  it('loads JSON and YAML files, and gives equivalent policies the same digest', async () => {
    const json = await loadPolicy(new URL('refunds.json', fixtures).pathname);
    const yaml = await loadPolicy(new URL('refunds-equivalent.yaml', fixtures).pathname);
    expect(yaml.digest).toBe(json.digest);
    const text = await readFile(new URL('refunds.json', fixtures), 'utf8');
    expect((await loadPolicy(text)).digest).toBe(json.digest);
    expect((await loadPolicy(JSON.parse(text))).digest).toBe(json.digest);
    const changed = await loadPolicy(text.replace('"agno"', '"other"'));
    expect(changed.digest).not.toBe(json.digest);
  });

  it("gives tool_calls agno's digest, keeping floats as floats", async () => {
    const policy = await loadPolicy(new URL('refunds.json', fixtures).pathname);
    // Upstream vector: expected_tools [search], arguments {search: {query: agno}}.
    expect(policy.rules[0]!.scorers[0]!.digest).toBe(
      '49840d8071c89ff46e4da02d4df237ac861566f0fecd7271dacec00a88850f1f',
    );
    const withFloat = parsePolicyText(
      'version: 1\nrules:\n  - name: r\n    scorers:\n      - kind: tool_calls\n        expected_tools: [pay]\n        arguments: { pay: { amount: 1.0 } }\n',
    );
    const withInt = parsePolicyText(
      'version: 1\nrules:\n  - name: r\n    scorers:\n      - kind: tool_calls\n        expected_tools: [pay]\n        arguments: { pay: { amount: 1 } }\n',
    );
    expect(withFloat.rules[0]!.scorers[0]!.digest).toBe(
      toolCallsDigest(['pay'], { pay: { amount: new PyFloat(1) } }, true),
    );
    expect(withFloat.rules[0]!.scorers[0]!.digest).not.toBe(withInt.rules[0]!.scorers[0]!.digest);
  });

  it('refuses an invalid file with every problem and the file name', async () => {
    const path = new URL('invalid.yaml', fixtures).pathname;
    const err = await loadPolicy(path).catch((e) => e);
    expect(err).toBeInstanceOf(PolicyError);
    expect(err.problems).toEqual([
      {
        path: 'rules[0].scorers[0].expected_tool_order',
        message: 'expected array of strings',
        line: 6,
        column: 9,
      },
      { path: 'rules[0].scorers[1].unknown_option', message: 'unknown key', line: 8, column: 9 },
    ]);
    expect(err.message).toContain(path);
  });

  it('refuses a missing file and broken YAML with a PolicyError', async () => {
    const missing = await loadPolicy('/nonexistent/toolwatch.yaml').catch((e) => e);
    expect(missing).toBeInstanceOf(PolicyError);
    expect(missing.problems[0].message).toBe(
      'cannot read policy file /nonexistent/toolwatch.yaml: no such file',
    );
    const broken = await loadPolicy('version: 1\nrules: [\n').catch((e) => e);
    expect(broken).toBeInstanceOf(PolicyError);
  });

  it('returns an already-built policy unchanged', async () => {
    const policy = await loadPolicy(new URL('refunds.json', fixtures).pathname);
    expect(await loadPolicy(policy)).toBe(policy);
  });
});
