// YAML anchors and aliases in policy and case files: reuse works; an alias inside the node it
// names (a value that contains itself) and an alias bomb are refused as problems with their
// place, instead of looping forever (every walk of the value) or escaping as yaml's own error.
import { describe, expect, it } from 'vitest';
import { CasesError, parseCasesText } from '../../src/cases/load-cases.js';
import { loadPolicy, parsePolicyText } from '../../src/policy/load-policy.js';
import { parsePolicy } from '../../src/policy/parse-policy.js';
import { PolicyError, type PolicyProblem } from '../../src/policy/policy-error.js';

function problemsOf(fn: () => unknown): PolicyProblem[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof PolicyError) return err.problems;
    throw err;
  }
  throw new Error('expected a PolicyError');
}

const RULE = `name: r
    match: { agent: "refund-*" }`;

describe('YAML aliases in a policy', () => {
  it('reuse a node: both places get the same value', () => {
    const policy = parsePolicyText(`version: 1
rules:
  - name: refunds
    match: { agent: "refund-*" }
    scorers: &checks
      - kind: trajectory
        expected_tools: [get_order]
        arg_constraints: { get_order: { order_id: { equals: A1024 } } }
  - name: billing
    match: { agent: "billing-*" }
    scorers: *checks
`);
    expect(policy.rules.map((r) => r.name)).toEqual(['refunds', 'billing']);
    const [a, b] = policy.rules.map((r) => r.scorers[0]!);
    expect(a!.kind).toBe('trajectory');
    expect(b!.digest).toBe(a!.digest);
  });

  it('refuses an alias inside the node it names, at the alias', () => {
    const cases: Array<[string, number, number]> = [
      [`version: 1\nx: &a [*a]\nrules: []\n`, 2, 8],
      [`version: 1\nrules: &r\n  - ${RULE}\n    scorers: *r\n`, 5, 14],
      [
        `version: 1\nrules:\n  - &x { name: r, match: { agent: a }, scorers: [{ kind: tool_order, expected_tool: t, note: *x }] }\n`,
        3,
        94,
      ],
      // Through a node in between: the alias names its grandparent.
      [`version: 1\nrules: []\ngates: &g { nested: { deeper: [1, *g] } }\n`, 3, 35],
    ];
    for (const [text, line, column] of cases) {
      expect(problemsOf(() => parsePolicyText(text))).toEqual([
        {
          path: '',
          message: expect.stringMatching(/^alias \*\w+ is inside the node it refers to \(a cycle\)$/),
          line,
          column,
        },
      ]);
    }
  });

  it('refuses an alias bomb as a problem of the file', () => {
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 7; i++) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(', ')}]`);
    }
    const problems = problemsOf(() => parsePolicyText(`${levels.join('\n')}\nversion: 1\nrules: []\n`));
    expect(problems).toEqual([
      {
        path: '',
        message: expect.stringMatching(/^aliases expand to 6053427 nodes, over the limit of 100000 /),
        line: 2,
        column: 8,
      },
    ]);
  });

  it('refuses the same in a file given by path, as a PolicyError', async () => {
    await expect(
      loadPolicy('version: 1\nrules: &r [{ name: r, match: { agent: a }, scorers: *r }]\n'),
    ).rejects.toThrow(/alias \*r is inside the node it refers to/);
  });
});

describe('YAML aliases in a case file', () => {
  it('refuses an alias inside the node it names', () => {
    let error: unknown;
    try {
      parseCasesText('- &c { id: a, input: hello, expected_tools: [t], tags: *c }\n', 'cases.yaml');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(CasesError);
    expect((error as CasesError).problems).toEqual([
      { path: '', message: 'alias *c is inside the node it refers to (a cycle)', line: 1, column: 56 },
    ]);
  });
});

describe('a policy object that contains itself', () => {
  it('is refused with the path of the cycle', () => {
    const looped: Record<string, unknown> = { a: 1 };
    looped.self = looped;
    const policy = {
      version: 1,
      rules: [
        {
          name: 'r',
          match: { agent: '*' },
          scorers: [
            {
              kind: 'trajectory',
              expected_tools: ['x'],
              arg_constraints: { x: { k: { equals: looped } } },
            },
          ],
        },
      ],
    };
    expect(problemsOf(() => parsePolicy(policy))).toEqual([
      { path: 'rules[0].scorers[0].arg_constraints.x.k.equals.self', message: 'contains itself (a cycle)' },
    ]);
  });

  it('accepts a value shared by two keys (not a cycle)', () => {
    const shared = { order_id: { equals: 'A1024' } };
    const policy = parsePolicy({
      version: 1,
      rules: [
        {
          name: 'r',
          match: { agent: '*' },
          scorers: [
            { kind: 'trajectory', expected_tools: ['a', 'b'], arg_constraints: { a: shared, b: shared } },
          ],
        },
      ],
    });
    expect(policy.rules[0]!.scorers).toHaveLength(1);
  });
});
