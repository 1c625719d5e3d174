// `npm run build` (also `prepack`): a clean dist/ with the JavaScript, source maps that carry
// their sources (src/ is not shipped), and one bundled .d.ts per public entry point. Bundled
// declarations hold only what the entry exports and what those types reference, so users'
// type-checks never load zod or the internal modules.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateDtsBundle } from 'dts-bundle-generator';

const root = fileURLToPath(new URL('..', import.meta.url));
process.chdir(root);

/** Public entry points (package.json `exports`) by source file. */
const ENTRIES = [
  'src/index.ts',
  'src/gateway/index.ts',
  'src/guard/adapters/ai-sdk.ts',
  'src/guard/adapters/openai-agents.ts',
  'src/guard/adapters/langchain.ts',
  'src/guard/adapters/mastra.ts',
].filter((file) => existsSync(file));

rmSync('dist', { recursive: true, force: true });
const tsc = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
  stdio: 'inherit',
});
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

const bundles = generateDtsBundle(
  ENTRIES.map((filePath) => ({
    filePath,
    output: { noBanner: true, exportReferencedTypes: false },
  })),
  { preferredConfigPath: 'tsconfig.build.json' },
);
bundles.forEach((text, i) => {
  const out = ENTRIES[i].replace(/^src\//, 'dist/').replace(/\.ts$/, '.d.ts');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, text);
});

if (existsSync('dist/cli/main.js')) chmodSync('dist/cli/main.js', 0o755);
