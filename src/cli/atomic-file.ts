import { randomBytes } from 'node:crypto';
import { unlinkSync } from 'node:fs';
import { type FileHandle, open, realpath, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * An output file that appears whole or not at all: written to a temporary file beside it
 * and renamed into place on `commit`, so a reader, or another run writing the same path,
 * never sees a file mixing runs or cut mid-line (concurrent `toolwatch score --out F` runs
 * left F with torn lines). `abort` removes the temporary file and leaves the path as it was.
 * A destination that is not a regular file (`/dev/stdout`, a pipe) is written directly:
 * renaming over it would replace the device. A symbolic link is followed: its target is
 * replaced, the link kept.
 */
export interface AtomicFile {
  readonly handle: FileHandle;
  commit(): Promise<void>;
  abort(): Promise<void>;
}

/** Temporary files of this process not yet committed or aborted, removed if it exits first. */
const pending = new Set<string>();
let hooked = false;

function removePending(): void {
  for (const file of pending) {
    try {
      unlinkSync(file);
    } catch {}
  }
  pending.clear();
}

/**
 * Removes the temporary files at exit, and on a signal that would end the process (Ctrl-C,
 * `kill`), which skips the exit event: the signal is then raised again as it came, so the
 * process ends as it would have (or as other listeners decide).
 */
function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.once('exit', removePending);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = () => {
      removePending();
      process.removeListener(signal, onSignal);
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}

export async function openAtomic(path: string): Promise<AtomicFile> {
  let target = path;
  try {
    target = await realpath(path);
    if (!(await stat(target)).isFile()) {
      const handle = await open(target, 'w');
      return { handle, commit: () => handle.close(), abort: () => handle.close() };
    }
  } catch (err) {
    // A path that does not exist yet is created by the rename.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const temp = join(
    dirname(target),
    `.${basename(target)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`,
  );
  // `wx`: never an existing file (a link planted at the name would be written through).
  const handle = await open(temp, 'wx');
  pending.add(temp);
  hookExit();
  let settled = false;
  const abort = async () => {
    if (settled) return;
    settled = true;
    await handle.close().catch(() => {});
    await unlink(temp).catch(() => {});
    pending.delete(temp);
  };
  return {
    handle,
    commit: async () => {
      if (settled) return;
      try {
        await handle.close();
        await rename(temp, target);
      } catch (err) {
        await abort();
        throw err;
      }
      settled = true;
      pending.delete(temp);
    },
    abort,
  };
}

/** `text` written to `path` whole, through a temporary file. */
export async function writeFileAtomic(path: string, text: string): Promise<void> {
  const file = await openAtomic(path);
  try {
    await file.handle.writeFile(text);
  } catch (err) {
    await file.abort();
    throw err;
  }
  await file.commit();
}
