// The README is the front door and docs/ the reference: these guard what a reader relies on —
// a short README with its contents, links that lead somewhere, no citation of a document the
// repository does not contain, and blocks marked for what they are (the programs among them
// are run by test/package/packed-package.test.ts).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readmeBlocks } from '../package/readme-blocks.js';
import { codeSpans, markedTable, page, repoRoot } from './doc-tables.js';

const PAGES = [
  'README.md',
  'collector-config/README.md',
  ...readdirSync(join(repoRoot, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchor(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  for (const m of markdown.replace(/^```[\s\S]*?^```$/gm, '').matchAll(/^#{1,6} (.+)$/gm))
    out.add(anchor(m[1]!));
  return out;
}

/** Every file under a directory, skipping dependencies, build output and recorded data. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(repoRoot, dir))) {
    if (name === 'node_modules' || name === 'dist' || name === 'fixtures' || name === 'otelcol') continue;
    const path = `${dir}/${name}`;
    if (statSync(join(repoRoot, path)).isDirectory()) out.push(...filesUnder(path));
    else if (/\.(ts|mts|mjs|js|md|ya?ml|py|sh)$/.test(name)) out.push(path);
  }
  return out;
}

describe('the README', () => {
  const readme = page('README.md');

  it('is at most 300 lines, with contents that link every section', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
    const contents = readme.slice(
      readme.indexOf('## Contents'),
      readme.indexOf('\n## ', readme.indexOf('## Contents') + 1),
    );
    const sections = [...readme.matchAll(/^## (.+)$/gm)].map((m) => m[1]!).filter((h) => h !== 'Contents');
    expect(sections.length).toBeGreaterThanOrEqual(6);
    for (const section of sections) expect(contents, section).toContain(`(#${anchor(section)})`);
  });

  it('says which part a user needs: the processor, the gateway, the CLI, the guard', () => {
    const table = readme.slice(readme.indexOf('## Which part you need'));
    const rows = table.split('\n').filter((l) => l.startsWith('| **'));
    expect(rows.map((r) => /\*\*the (\w+)\*\*/.exec(r)?.[1])).toEqual([
      'processor',
      'gateway',
      'CLI',
      'guard',
    ]);
  });

  it('says how to install today, from a checkout, and once published', () => {
    expect(readme).toContain('npm pack');
    expect(readme).toMatch(/npm install \.\.\/toolwatch\/toolwatch-[\d.]+\.tgz/);
    expect(readme).toContain('npm install toolwatch');
  });
});

describe.each(PAGES)('%s', (path) => {
  const markdown = page(path);

  it('links only to files and headings that exist', () => {
    for (const m of markdown.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      if (/^[a-z]+:/.test(target)) continue;
      const [file, hash] = target.split('#') as [string, string | undefined];
      const resolved = file === '' ? path : relative(repoRoot, join(repoRoot, dirname(path), file));
      expect(() => statSync(join(repoRoot, resolved)), `${path} links to ${target}`).not.toThrow();
      if (hash && resolved.endsWith('.md')) {
        expect(
          anchors(readFileSync(join(repoRoot, resolved), 'utf8')),
          `${path} links to ${target}`,
        ).toContain(hash);
      }
    }
  });

  it('marks every code block with its language: programs, policies, CLI lines, or text', () => {
    for (const block of readmeBlocks(markdown)) {
      expect(['js', 'ts', 'yaml', 'sh', 'text'], `${path} block ${block.index}`).toContain(block.lang);
      // Shell blocks are CLI lines the packed-package test runs; anything else is `text`.
      if (block.lang === 'sh') {
        for (const line of block.code.trim().split('\n')) expect(line, path).toMatch(/^npx toolwatch /);
      }
    }
  });
});

describe('no citation of a document the repository does not contain', () => {
  // Background documents of the project's history, and issue numbers, mean nothing to a reader.
  const CITATION =
    /\bissue #?\d+|\bsemantics(\.md)? ?§|\bseed (document )?\d{3}|\bseed document\b|\binterfaces\.md|\bconventions\.md|\bagno\.md|\bmastra\.md|shared\/(spec|research)/i;

  it.each(['src', 'test', 'examples', 'docs', 'collector-config', 'bench', 'scripts'])('in %s/', (dir) => {
    const found: string[] = [];
    for (const file of filesUnder(dir)) {
      if (file.startsWith('docs/notes/') || file === 'test/docs/doc-pages.test.ts') continue;
      readFileSync(join(repoRoot, file), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (CITATION.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });

  it('in README.md', () => {
    expect(page('README.md')).not.toMatch(CITATION);
  });
});

describe('docs/processor.md', () => {
  it('documents every option of ToolwatchSpanProcessorOptions', () => {
    const source = page('src/processor/toolwatch-span-processor.ts');
    const body = source.slice(source.indexOf('export interface ToolwatchSpanProcessorOptions {'));
    const options = [...body.slice(0, body.indexOf('\n}')).matchAll(/^ {2}(\w+)\??:/gm)].map((m) => m[1]!);
    expect(options).toContain('maxBufferedBytes');
    const documented = markedTable(page('docs/processor.md'), 'keys: processor-options').flatMap((r) =>
      codeSpans(r[0]!),
    );
    expect(documented.sort()).toEqual(options.sort());
  });
});
