/**
 * `npm run bench`: runs every bench/*.bench.ts (or those named on the command line) and
 * prints their tables. Figures are ratios against a baseline measured in the same run,
 * because the machines this runs on are shared and noisy.
 */
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface BenchReport {
  name: string;
  rows: Array<Record<string, string | number>>;
  notes?: string[];
}

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

function table(rows: BenchReport['rows']): string {
  if (rows.length === 0) return '(no rows)';
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cell = (v: unknown) => (typeof v === 'number' ? formatNumber(v) : String(v ?? ''));
  const lines = [`| ${cols.join(' | ')} |`, `| ${cols.map(() => '---').join(' | ')} |`];
  for (const r of rows) lines.push(`| ${cols.map((c) => cell(r[c])).join(' | ')} |`);
  return lines.join('\n');
}

function formatNumber(v: number): string {
  if (Number.isInteger(v)) return v.toLocaleString('en-US');
  if (Math.abs(v) >= 100) return v.toFixed(0);
  if (Math.abs(v) >= 1) return v.toFixed(2);
  return v.toFixed(3);
}

console.log(`# toolwatch benchmarks — node ${process.version}, ${new Date().toISOString()}\n`);
let failed = false;
for (const file of files) {
  try {
    const mod = (await import(pathToFileURL(join(here, file)).href)) as { run: () => Promise<BenchReport> };
    const report = await mod.run();
    console.log(`## ${report.name} (${file})\n`);
    console.log(table(report.rows));
    for (const n of report.notes ?? []) console.log(`\n- ${n}`);
    console.log('');
  } catch (err) {
    failed = true;
    console.error(`bench ${file} failed:`, err);
  }
}
process.exitCode = failed ? 1 : 0;
