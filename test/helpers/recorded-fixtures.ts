import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spansFromOtlpJson } from '../../src/conventions/from-otlp-json.js';
import type { SpanLike } from '../../src/types.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));

/** Every recorded OTLP/JSON trace under `test/fixtures/` (or `dir`), in a stable order. */
export function otlpFixtures(dir: string = FIXTURES): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...otlpFixtures(path));
    else if (name.endsWith('.otlp.json')) out.push(path);
  }
  return out;
}

/** The spans of every recorded trace, decoded. */
export function recordedSpans(): SpanLike[] {
  const out: SpanLike[] = [];
  for (const file of otlpFixtures()) out.push(...spansFromOtlpJson(JSON.parse(readFileSync(file, 'utf8'))));
  return out;
}
