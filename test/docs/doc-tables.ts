import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** A documentation page of the repository, by its path from the root. */
export function page(path: string): string {
  return readFileSync(repoRoot + path, 'utf8');
}

/**
 * The rows of the table that follows `<!-- NAME -->` in a page (a comment readers do not see):
 * each row's cells, header and separator left out.
 */
export function markedTable(markdown: string, marker: string): string[][] {
  const at = markdown.indexOf(`<!-- ${marker} -->`);
  if (at < 0) throw new Error(`no table marked <!-- ${marker} -->`);
  const lines = markdown.slice(at).split('\n').slice(1);
  const rows: string[][] = [];
  for (const line of lines) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((c) => c.trim()),
    );
  }
  return rows.slice(2);
}

/** The backticked names in a cell: `` `--out PATH` `` gives `--out PATH`. */
export function codeSpans(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
}
