import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';

/** The first of `inputs` that is the file `out` names (same device and inode: links too). */
export async function sameFile(
  out: string,
  inputs: ReadonlyArray<string | undefined>,
): Promise<string | undefined> {
  let target: Stats;
  try {
    target = await stat(out);
  } catch {
    return undefined; // a new file cannot be an input
  }
  for (const input of inputs) {
    if (input === undefined || input === '-') continue;
    try {
      const s = await stat(input);
      if (s.dev === target.dev && s.ino === target.ino) return input;
    } catch {
      // An unreadable input is reported where it is read.
    }
  }
  return undefined;
}
