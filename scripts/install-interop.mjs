// `prepare` hook: installs the real-framework interop packages that the interop tests, the
// demo and the examples drive. Each has its own lockfile because their pins must not clash
// with the root's: test/interop (AI SDK 6, Mastra 0.24, OpenAI Agents 0.14, LangChain 1) and
// test/interop/next (AI SDK 7, Mastra 1.x). npm runs `prepare` on a local `npm ci` or
// `npm install`, never when toolwatch is installed as a dependency.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

for (const folder of ['../test/interop/', '../test/interop/next/']) {
  const dir = new URL(folder, import.meta.url);
  if (!existsSync(new URL('package-lock.json', dir))) continue;
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--prefix', dir.pathname], { stdio: 'inherit' });
}
