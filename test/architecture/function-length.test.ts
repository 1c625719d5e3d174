import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { SRC, tsFiles } from './src-files.js';

/**
 * The longest a function in `src/` may be, in lines from its first token to its last. Longer
 * functions become a pipeline of named phases (as `reconstruction/` is), each returning its
 * outcome to the caller instead of writing shared locals through closures.
 */
const MAX_LINES = 150;

interface FunctionLength {
  name: string;
  file: string;
  line: number;
  lines: number;
}

type FunctionLike =
  | ts.FunctionDeclaration
  | ts.MethodDeclaration
  | ts.ConstructorDeclaration
  | ts.GetAccessorDeclaration
  | ts.SetAccessorDeclaration
  | ts.ArrowFunction
  | ts.FunctionExpression;

function isFunctionLike(node: ts.Node): node is FunctionLike {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node) ||
    ts.isArrowFunction(node) ||
    ts.isFunctionExpression(node)
  );
}

/** The class (or object) a member belongs to, for `Class.method` names. */
function ownerName(member: ts.Node): string | undefined {
  const owner = member.parent;
  if ((ts.isClassDeclaration(owner) || ts.isClassExpression(owner)) && owner.name !== undefined)
    return owner.name.text;
  return undefined;
}

function propertyName(name: ts.PropertyName | ts.BindingName): string {
  return ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isPrivateIdentifier(name)
    ? name.text
    : name.getText();
}

/**
 * What a reader calls a function: its own name, the variable, property or class member it is
 * assigned to, or — for a callback nobody named — the call it is passed to.
 */
function nameOf(node: FunctionLike): string {
  const qualified = (name: string) => {
    const owner = ownerName(node);
    return owner === undefined ? name : `${owner}.${name}`;
  };
  if (ts.isConstructorDeclaration(node)) return qualified('constructor');
  if (ts.isGetAccessorDeclaration(node)) return qualified(`get ${propertyName(node.name)}`);
  if (ts.isSetAccessorDeclaration(node)) return qualified(`set ${propertyName(node.name)}`);
  if (ts.isMethodDeclaration(node)) return qualified(propertyName(node.name));
  if ((ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node)) && node.name !== undefined)
    return node.name.text;
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent)) return propertyName(parent.name);
  if (ts.isPropertyAssignment(parent)) return propertyName(parent.name);
  if (ts.isPropertyDeclaration(parent)) {
    const owner = ownerName(parent);
    const name = propertyName(parent.name);
    return owner === undefined ? name : `${owner}.${name}`;
  }
  if (ts.isBinaryExpression(parent) && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken)
    return parent.left.getText();
  if (ts.isCallExpression(parent) || ts.isNewExpression(parent))
    return `callback of ${parent.expression.getText().slice(0, 60)}`;
  return 'anonymous function';
}

/** Every function-like node of one source text, with its length in lines (its nested functions included). */
function functionLengths(file: string, text: string): FunctionLength[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: FunctionLength[] = [];
  const visit = (node: ts.Node) => {
    if (isFunctionLike(node) && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      found.push({ name: nameOf(node), file, line: first + 1, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The functions over `max` lines, as `name (file:line): N lines`, longest first. */
function tooLong(lengths: readonly FunctionLength[], max = MAX_LINES): string[] {
  return lengths
    .filter((fn) => fn.lines > max)
    .sort((a, b) => b.lines - a.lines)
    .map((fn) => `${fn.name} (${fn.file}:${fn.line}): ${fn.lines} lines`);
}

describe("src/'s function lengths", () => {
  const lengths = tsFiles(SRC).flatMap((path) =>
    functionLengths(relative(SRC, path), readFileSync(path, 'utf8')),
  );

  it('measures every kind of function (not vacuous)', () => {
    expect(lengths.length).toBeGreaterThan(1000);
    const names = new Set(lengths.map((fn) => `${fn.file} ${fn.name}`));
    expect(names).toContain('processor/toolwatch-span-processor.ts ToolwatchSpanProcessor.constructor');
    expect(names).toContain('processor/toolwatch-span-processor.ts ToolwatchSpanProcessor.onEnd');
    expect(names).toContain('cli/commands/score.ts scoreCommand');
  });

  it(`has no function over ${MAX_LINES} lines`, () => {
    expect(tooLong(lengths)).toEqual([]);
  });

  it('names and measures each kind, nested functions inside their parent (the check has teeth)', () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const text = [
      '/** A comment above does not count. */',
      `export function declared() {\n${body(149)}\n}`,
      `const arrow = () => {\n${body(10)}\n};`,
      'class Shelf {',
      `  constructor() {\n${body(3)}\n  }`,
      `  get size() {\n${body(1)}\n    return 1;\n  }`,
      '  outer() {',
      `    const inner = function () {\n${body(150)}\n    };`,
      '  }',
      '}',
      `run(() => {\n${body(2)}\n});`,
    ].join('\n');
    const measured = functionLengths('fresh/x.ts', text);
    expect(measured.map(({ name, line, lines }) => ({ name, line, lines }))).toEqual([
      { name: 'declared', line: 2, lines: 151 },
      { name: 'arrow', line: 153, lines: 12 },
      { name: 'Shelf.constructor', line: 166, lines: 5 },
      { name: 'Shelf.get size', line: 171, lines: 4 },
      { name: 'Shelf.outer', line: 175, lines: 154 },
      { name: 'inner', line: 176, lines: 152 },
      { name: 'callback of run', line: 330, lines: 4 },
    ]);
    expect(tooLong(measured)).toEqual([
      'Shelf.outer (fresh/x.ts:175): 154 lines',
      'inner (fresh/x.ts:176): 152 lines',
      'declared (fresh/x.ts:2): 151 lines',
    ]);
  });
});
