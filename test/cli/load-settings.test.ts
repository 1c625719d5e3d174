import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/cli/load-settings.js';
import { PolicyError } from '../../src/policy/policy-error.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwatch-settings-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('loadSettings (--policy beside --cases)', () => {
  it('refuses a `__proto__` key by path (copied into the cases policy, it vanished without a word)', async () => {
    const path = join(dir, 'settings.yaml');
    await writeFile(path, 'version: 1\n__proto__: { gates: { forbidden_tool_calls: { max: 0 } } }\n');
    let error: unknown;
    try {
      await loadSettings(path);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(PolicyError);
    expect((error as PolicyError).problems).toEqual([
      { path: '__proto__', message: '`__proto__` cannot be a key' },
    ]);
  });
});
