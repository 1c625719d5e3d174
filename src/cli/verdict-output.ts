import { writeSync } from 'node:fs';
import type { GateOutcome } from '../evaluation/check-gates.js';
import { terminalText } from '../input/printable.js';
import type { RebuiltRun } from '../report/rebuilt-run.js';
import type { ReportBuilder, ReportBuilderOptions } from '../report/report-builder.js';
import type { InputStats, Report, RolloutGrid } from '../report/report-types.js';
import type { Verdict } from '../types.js';
import { type AtomicFile, openAtomic } from './atomic-file.js';
import type { CliIo } from './cli-io.js';

export type ReportFormat = 'json' | 'table' | 'junit' | 'markdown' | 'html';

export const REPORT_FORMATS: readonly ReportFormat[] = ['json', 'table', 'junit', 'markdown', 'html'];

export interface ReportExtras {
  gates?: GateOutcome[];
  input?: InputStats;
  grid?: RolloutGrid;
}

/**
 * Where verdicts go as they are judged: JSON Lines are written at once; JUnit is spooled;
 * the table, Markdown and HTML reports aggregate in bounded memory and render at the end.
 */
export interface VerdictOutput {
  /** `rebuilt`: what was rebuilt of a failing verdict's run, for the HTML report. */
  add(v: Verdict, file?: string, rebuilt?: RebuiltRun): void | Promise<void>;
  /**
   * Verdict lines serialised elsewhere, each ending in a newline (the workers of `toolwatch
   * score --jobs`); JSON Lines output only.
   */
  addLines?(lines: string): void | Promise<void>;
  /** Writes what remains and closes the destination: an output file appears whole, now. */
  finish(extras?: ReportExtras): Promise<void>;
  /** A run that cannot finish: an output file is not written (what was written is removed). */
  abort(): Promise<void>;
  /** The aggregate report, for the report formats (undefined for json and junit). */
  readonly builder?: ReportBuilder;
}

type Write = (text: string) => void | Promise<void>;

/** An output file that cannot be opened or written: a usage-level problem (exit 2), not a bug. */
export class OutputError extends Error {}

interface Destination {
  write: Write;
  close: () => Promise<void>;
  abort: () => Promise<void>;
}

async function destination(path: string | undefined, io: CliIo): Promise<Destination> {
  if (!path) return { write: io.stdout, close: async () => {}, abort: async () => {} };
  let file: AtomicFile;
  try {
    file = await openAtomic(path);
  } catch (err) {
    throw new OutputError(`cannot write ${path}: ${(err as Error).message}`);
  }
  const fail = (err: Error) => new OutputError(`cannot write ${path}: ${err.message}`);
  const fd = file.handle.fd;
  // Written synchronously: writing to a file copies into the page cache whether this thread
  // or libuv's pool does it, and a write stream adds an encoded Buffer per write and a pass
  // through its queue (40 MB of verdicts: 11-15 ms of CPU written here, 69-99 ms through a
  // write stream). The writes are already batched (see jsonLines).
  return {
    write: (text) => {
      try {
        const written = writeSync(fd, text);
        // Short only on a pipe or device interrupted mid-write: write the rest.
        if (written < Buffer.byteLength(text)) {
          const bytes = Buffer.from(text);
          for (let at = written; at < bytes.length; ) at += writeSync(fd, bytes, at);
        }
      } catch (err) {
        throw fail(err as Error);
      }
    },
    close: async () => {
      try {
        await file.commit();
      } catch (err) {
        throw fail(err as Error);
      }
    },
    abort: () => file.abort(),
  };
}

export async function openOutput(
  format: ReportFormat,
  path: string | undefined,
  io: CliIo,
  options: ReportBuilderOptions,
): Promise<VerdictOutput> {
  const dest = await destination(path, io);
  if (format === 'json') return jsonLines(dest);
  // The report modules are loaded only for their formats: JSON Lines starts without them.
  if (format === 'junit') {
    const { JunitSpool } = await import('../report/junit.js');
    const spool = new JunitSpool(options.redact ?? options.policy?.redact, options.title ?? 'toolwatch');
    return {
      add: (v, file) => spool.add(v, file),
      finish: async () => {
        await spool.finish(dest.write);
        await dest.close();
      },
      abort: dest.abort,
    };
  }
  const builder = new (await import('../report/report-builder.js')).ReportBuilder(options);
  // Table and Markdown carry span data (agent and tool names) to a terminal or a PR comment
  // as is: their control bytes are escaped. HTML escapes its own.
  let render: (r: Report) => string;
  if (format === 'table') {
    const { renderText } = await import('../report/render-text.js');
    render = (r) => terminalText(renderText(r));
  } else if (format === 'markdown') {
    const { renderMarkdown } = await import('../report/render-markdown.js');
    render = (r) => terminalText(renderMarkdown(r));
  } else render = (await import('../report/render-html.js')).renderHtml;
  return {
    builder,
    add: (v, file, rebuilt) => builder.add(v, file, rebuilt),
    finish: async (extras = {}) => {
      if (extras.gates) builder.setGates(extras.gates);
      if (extras.input) builder.setInput(extras.input);
      if (extras.grid) builder.setGrid(extras.grid);
      await dest.write(render(builder.build()));
      await dest.close();
    },
    abort: dest.abort,
  };
}

/** Verdict lines gathered into one write of about this many characters. */
const BATCH = 64 * 1024;

/** A verdict as one JSON Lines line, newline included. */
export function verdictLine(v: Verdict): string {
  return `${JSON.stringify(v)}\n`;
}

/**
 * JSON Lines verdicts, one write per batch rather than per verdict (a write per line is a
 * stream entry and a buffer each). A batch is written when it is full or, at the latest,
 * once the current turn of the event loop ends, so verdicts still appear as they are judged
 * when the input trickles in (stdin from a live pipe).
 */
function jsonLines(dest: Destination): VerdictOutput {
  let text = '';
  let scheduled = false;
  // A write begun by the end-of-turn flush: its backpressure or error, for the next add.
  let pending: Promise<void> | undefined;
  let failure: unknown;
  const flush = (): void | Promise<void> => {
    if (text.length === 0) return;
    const batch = text;
    text = '';
    return dest.write(batch);
  };
  const flushLater = () => {
    scheduled = false;
    try {
      const written = flush();
      if (written)
        pending = written.then(
          () => {
            pending = undefined;
          },
          (err) => {
            failure = err;
            pending = undefined;
          },
        );
    } catch (err) {
      failure = err;
    }
  };
  const check = () => {
    if (failure !== undefined) throw failure;
  };
  const append = (lines: string): void | Promise<void> => {
    check();
    text += lines;
    if (pending) return pending.then(check);
    if (text.length >= BATCH) return flush();
    if (!scheduled) {
      scheduled = true;
      setImmediate(flushLater);
    }
  };
  return {
    add: (v) => append(verdictLine(v)),
    addLines: append,
    finish: async () => {
      await pending;
      check();
      await flush();
      await dest.close();
    },
    abort: dest.abort,
  };
}
