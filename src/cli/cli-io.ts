import type { Readable } from 'node:stream';

/** The CLI's view of the process, so commands can be run in tests without one. */
export interface CliIo {
  /** May return a promise when the stream is full: await it before writing more. */
  stdout: (text: string) => void | Promise<void>;
  stderr: (text: string) => void;
  /** Read for the input file `-`. */
  stdin?: Readable;
  /** Progress lines on stderr only when it is a terminal. Default false. */
  stderrIsTTY?: boolean;
}
