import { describe, expect, it } from 'vitest';
import { findRun, runsInOrder } from '../../src/reconstruction/run-tree.js';
import type { AgentRun } from '../../src/types.js';

function run(spanId: string, children: AgentRun[] = []): AgentRun {
  return { spanId, children } as unknown as AgentRun;
}

describe('run tree', () => {
  const forest = [run('a', [run('a1', [run('a11')]), run('a2')]), run('b')];

  it('walks runs depth first, parents before children', () => {
    expect(runsInOrder(forest).map((r) => r.spanId)).toEqual(['a', 'a1', 'a11', 'a2', 'b']);
  });

  it('finds a run at any depth, or nothing', () => {
    expect(findRun(forest, 'a11')?.spanId).toBe('a11');
    expect(findRun(forest, 'zz')).toBeUndefined();
  });
});
