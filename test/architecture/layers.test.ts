import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { SRC, tsFiles } from './src-files.js';

/**
 * The floors of `src/`, lowest first: a file may import its own folder and the folders of
 * lower floors, never a folder on its own floor or above. The order is what the code does:
 * conventions read spans, reconstruction rebuilds runs from them, scorers judge runs, the
 * policy names scorers, evaluation runs a policy over runs; the processor, the gateway and the
 * report consume evaluation; rollouts drive the processor, the CLI drives everything, and
 * `index.ts` is the package's front door. Root files count as folders of their own.
 */
const FLOORS: readonly (readonly string[])[] = [
  ['types.ts', 'semconv.ts', 'util'],
  ['otlp'],
  ['input'],
  ['conventions'],
  ['reconstruction'],
  ['scorers'],
  ['policy', 'emission'],
  ['evaluation'],
  ['cases', 'report', 'guard'],
  ['processor', 'gateway'],
  ['rollouts'],
  ['cli'],
  ['index.ts'],
];

interface ImportEdge {
  from: string;
  to: string;
}

/** Every relative import of every `.ts` file under `root` (static, re-exports and `import()`), as paths relative to it. */
function importsOf(root: string): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const file of tsFiles(root)) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const add = (specifier: string) => {
      if (!specifier.startsWith('.')) return;
      const target = resolve(dirname(file), specifier.replace(/\.js$/, '.ts'));
      edges.push({ from: relative(root, file), to: relative(root, target) });
    };
    const visit = (node: ts.Node) => {
      if (
        (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
        node.moduleSpecifier !== undefined &&
        ts.isStringLiteral(node.moduleSpecifier)
      ) {
        add(node.moduleSpecifier.text);
      } else if (
        ts.isCallExpression(node) &&
        node.expression.kind === ts.SyntaxKind.ImportKeyword &&
        node.arguments[0] !== undefined &&
        ts.isStringLiteral(node.arguments[0])
      ) {
        add(node.arguments[0].text);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return edges;
}

/** The folder (or root file) a path of `src/` belongs to. */
function roomOf(path: string): string {
  return path.split(/[\\/]/)[0]!;
}

/** Imports between rooms that do not go down the floors, and rooms on no floor. */
function upwardImports(edges: readonly ImportEdge[], floors = FLOORS): string[] {
  const floorOf = new Map<string, number>();
  floors.forEach((rooms, floor) => {
    for (const room of rooms) floorOf.set(room, floor);
  });
  const wrong: string[] = [];
  for (const { from, to } of edges) {
    const a = roomOf(from);
    const b = roomOf(to);
    if (a === b) continue;
    const fa = floorOf.get(a);
    const fb = floorOf.get(b);
    if (fa === undefined || fb === undefined)
      wrong.push(`${from} -> ${to}: ${fa === undefined ? a : b} is on no floor`);
    else if (fb >= fa) wrong.push(`${from} -> ${to}: ${a} (floor ${fa}) imports ${b} (floor ${fb})`);
  }
  return wrong;
}

/** The file-level import circles (strongly connected components of more than one file, or a file importing itself). */
function importCircles(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) {
    if (!next.has(from)) next.set(from, []);
    if (!next.has(to)) next.set(to, []);
    next.get(from)!.push(to);
  }
  // Tarjan's algorithm, iteratively (no recursion limit on long chains).
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  for (const start of next.keys()) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; child: number }> = [{ node: start, child: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const children = next.get(frame.node)!;
      if (frame.child < children.length) {
        const child = children[frame.child++]!;
        if (!index.has(child)) {
          index.set(child, counter);
          low.set(child, counter++);
          stack.push(child);
          onStack.add(child);
          work.push({ node: child, child: 0 });
        } else if (onStack.has(child)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(child)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent !== undefined) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        if (component.length > 1 || children.includes(frame.node)) circles.push(component.sort());
      }
    }
  }
  return circles;
}

describe("src/'s layering", () => {
  const edges = importsOf(SRC);

  it('reads the imports (not vacuous)', () => {
    expect(edges.length).toBeGreaterThan(400);
    // One of each kind: static, type-only, dynamic.
    expect(edges).toContainEqual({ from: 'index.ts', to: 'processor/toolwatch-span-processor.ts' });
    expect(edges).toContainEqual({ from: 'cli/scoring.ts', to: 'cases/load-cases.ts' });
  });

  it('puts every folder on a floor, and imports only go down the floors', () => {
    expect(upwardImports(edges)).toEqual([]);
  });

  it('has no file-level import circle', () => {
    expect(importCircles(edges)).toEqual([]);
  });

  it('sees an upward import and a circle (the checks have teeth)', () => {
    const up = { from: 'conventions/span-role.ts', to: 'processor/toolwatch-span-processor.ts' };
    expect(upwardImports([...edges, up])).toEqual([
      'conventions/span-role.ts -> processor/toolwatch-span-processor.ts: conventions (floor 3) imports processor (floor 9)',
    ]);
    expect(upwardImports([{ from: 'policy/x.ts', to: 'emission/y.ts' }])).toHaveLength(1);
    expect(upwardImports([{ from: 'fresh/x.ts', to: 'types.ts' }])).toEqual([
      'fresh/x.ts -> types.ts: fresh is on no floor',
    ]);
    const back = { from: 'reconstruction/trace-model.ts', to: 'reconstruction/read-facts.ts' };
    expect(importCircles([...edges, back])).toEqual([
      ['reconstruction/read-facts.ts', 'reconstruction/trace-model.ts'],
    ]);
  });
});
