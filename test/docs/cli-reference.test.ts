// docs/cli.md is the CLI reference: each command's flag table must list exactly the flags its
// `--help` prints, so a flag cannot go undocumented (nor a removed one stay documented).
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { codeSpans, markedTable, page, repoRoot } from './doc-tables.js';

const reference = page('docs/cli.md');

function help(command: string[], flag: string): string {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...command, flag], {
    cwd: repoRoot,
    encoding: 'utf8',
    timeout: 120_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

const FLAG = /(?<![\w-])(--[a-z][a-z-]*|-[a-z])\b/g;

/**
 * The flags a help text offers: those of its usage line and of its option lines (an indented
 * line starting with `-`, up to the gap before the description). Flags named in prose (`see
 * toolwatch score --gate`) are not the command's.
 */
function helpFlags(text: string): string[] {
  const flags = new Set<string>();
  for (const line of text.split('\n')) {
    const usage = /^usage: (.*)$/.exec(line);
    const option = /^\s+(-.*)$/.exec(line);
    const part = usage ? usage[1]! : option ? option[1]!.split(/\s{2,}/)[0]! : '';
    for (const m of part.matchAll(FLAG)) flags.add(m[1]!);
  }
  return [...flags].sort();
}

/** The flags a reference table documents: each code span's first word. */
function documentedFlags(marker: string): string[] {
  const flags = markedTable(reference, marker).flatMap((row) =>
    codeSpans(row[0]!).map((span) => span.split(' ')[0]!),
  );
  return [...new Set(flags)].sort();
}

/** `--help` and `-h` print the same text for every command: both are its flags. */
function helpAndItsFlags(command: string[]): { text: string; flags: string[] } {
  const text = help(command, '--help');
  expect(help(command, '-h')).toBe(text);
  return { text, flags: [...new Set([...helpFlags(text), '--help', '-h'])].sort() };
}

describe('docs/cli.md documents every flag of every command, as --help lists them', () => {
  it.each([['score'], ['baseline save'], ['cases check'], ['rollouts'], ['serve']])(
    'toolwatch %s',
    (name) => {
      const { flags } = helpAndItsFlags(name.split(' '));
      expect(documentedFlags(`flags: ${name}`)).toEqual(flags);
      expect(reference).toContain(`## \`toolwatch ${name}\``);
    },
  );

  it('toolwatch itself: --help, -h and --version', () => {
    const { text } = helpAndItsFlags([]);
    expect(text).toContain('toolwatch --version');
    expect(documentedFlags('flags: toolwatch')).toEqual(['--help', '--version', '-h']);
  });
});
