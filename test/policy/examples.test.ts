import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadPolicy } from '../../src/policy/load-policy.js';

const dir = fileURLToPath(new URL('../../examples/policies/', import.meta.url));
const files = readdirSync(dir).filter((f) => /\.(ya?ml|json)$/.test(f));

describe('examples/policies', () => {
  it('has examples', () => {
    expect(files).toContain('refunds.yaml');
  });

  it.each(files)('%s loads', async (file) => {
    const policy = await loadPolicy(`${dir}${file}`);
    expect(policy.rules.length).toBeGreaterThan(0);
    expect(policy.rules.every((r) => r.scorers.length > 0)).toBe(true);
  });
});
