import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { SRC, tsFiles } from './src-files.js';

/**
 * The `TraceState` methods that change what a trace holds (its spans, held count and bytes).
 * `TraceBuffer` keeps totals over all traces beside each trace's own: a call from anywhere
 * else would move one without the other, and the limits would drift.
 */
const COUNTING = new Set([
  'hold',
  'holdScope',
  'holdOrdinary',
  'forget',
  'forgetOrdinary',
  'releaseScope',
  'addBytes',
  'released',
  'releaseRun',
]);
const OWNER = join(SRC, 'processor', 'trace-buffer.ts');
const STATE = join(SRC, 'processor', 'trace-state.ts');

/** Every call of a counting `TraceState` method in `src/`, outside `TraceBuffer` and the class itself. */
function countingCallsOutsideBuffer(): string[] {
  const files = tsFiles(SRC);
  const program = ts.createProgram(files, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const found: string[] = [];
  for (const file of files) {
    if (file === OWNER || file === STATE) continue;
    // Only files that name the class can reach its methods (a parameter typed `TraceState`).
    if (!readFileSync(file, 'utf8').includes('TraceState')) continue;
    const source = program.getSourceFile(file);
    if (source === undefined) continue;
    const visit = (node: ts.Node): void => {
      if (
        ts.isCallExpression(node) &&
        ts.isPropertyAccessExpression(node.expression) &&
        COUNTING.has(node.expression.name.text)
      ) {
        const receiver = checker.getTypeAtLocation(node.expression.expression);
        if (receiver.getSymbol()?.getName() === 'TraceState') {
          const { line } = source.getLineAndCharacterOfPosition(node.getStart());
          found.push(`${relative(SRC, file)}:${line + 1} ${node.expression.getText()}`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

describe('a trace changes what it holds only through TraceBuffer', () => {
  it('no file but trace-buffer.ts calls the counting methods of TraceState', () => {
    expect(countingCallsOutsideBuffer()).toEqual([]);
  }, 120_000);
});
