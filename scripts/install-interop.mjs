// Installs the real-framework interop packages that the interop tests drive; `npm test` runs
// it first (pretest), and `.ci/run` runs it after `npm ci` (the type-check needs them too).
// The demo and the examples use the root's own dev dependencies only. Each tree has its own lockfile because their pins must not clash
// with the root's: test/interop (AI SDK 6, Mastra 0.24, OpenAI Agents 0.14, LangChain 1) and
// test/interop/next (AI SDK 7, Mastra 1.x). A tree whose installed packages already match its
// lockfile is left alone, so only the first run pays for the install (about three minutes).
// Not a `prepare` hook: that would also run on every `npm pack` and ship a script consumers
// do not have.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

const force = process.argv.includes('--force');

for (const folder of ['../test/interop/', '../test/interop/next/']) {
  const dir = new URL(folder, import.meta.url);
  if (!existsSync(new URL('package-lock.json', dir))) continue;
  if (!force && upToDate(dir)) continue;
  console.error(`installing the interop packages of ${folder.slice(3)} (npm ci, first run only)`);
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--prefix', dir.pathname], { stdio: 'inherit' });
}

/** Every package the lockfile installs is in node_modules at the locked version. */
function upToDate(dir) {
  const installedFile = new URL('node_modules/.package-lock.json', dir);
  if (!existsSync(installedFile)) return false;
  try {
    const wanted = JSON.parse(readFileSync(new URL('package-lock.json', dir), 'utf8')).packages;
    const installed = JSON.parse(readFileSync(installedFile, 'utf8')).packages;
    for (const [path, entry] of Object.entries(wanted)) {
      if (path === '' || entry.optional || entry.link) continue;
      if (installed[path]?.version !== entry.version) return false;
    }
    return true;
  } catch {
    return false;
  }
}
