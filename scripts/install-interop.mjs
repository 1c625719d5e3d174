// `prepare` hook: installs the real-framework interop package (test/interop) that the
// interop tests, the demo and the examples drive. It has its own lockfile because its
// pins (Mastra 0.24, OpenAI Agents 0.14, LangChain 1) must not clash with the root's.
// npm runs `prepare` on a local `npm ci`/`npm install`, never when toolwatch is installed
// as a dependency.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const dir = new URL('../test/interop/', import.meta.url);
if (existsSync(new URL('package-lock.json', dir))) {
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--prefix', dir.pathname], { stdio: 'inherit' });
}
