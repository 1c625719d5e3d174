import { readArray } from './read-values.js';
import type { MessageCall, RefusalFacts } from './span-facts.js';

/** Tool calls and tool results found in a conversation's messages. */
export interface MessageScan {
  calls: MessageCall[];
  /** Tool results by call id, as text: why a call that never ran was refused. */
  responses: RefusalFacts[];
}

/** Longest conversation text a reader remembers (UTF-16 units): one is held between reads. */
export const MAX_REMEMBERED = 4 * 1024 * 1024;
const COMMA = 44;
const CLOSE_BRACKET = 93;

/**
 * Reads a conversation so far (a model span's input messages, as JSON text of an array of
 * messages) as `scanMessages` over the whole array would, but remembers the last conversation
 * it read: each model span of a run records the whole conversation again, so a text equal to
 * the last one is not parsed, and one that continues it (the same text up to its closing
 * bracket, then a comma and more messages) has only the messages after it parsed and scanned.
 * A run's input side then costs what its conversation weighs, not that times its number of
 * model calls. `scanMessages` must read each message on its own (no state across messages).
 * One conversation is remembered (up to `MAX_REMEMBERED` characters); the scans handed out are
 * copies, never the one remembered.
 */
export class ConversationReader {
  private _last: { text: string; open: string; scan: MessageScan } | undefined;

  constructor(private readonly _scanMessages: (scan: MessageScan, messages: unknown[]) => void) {}

  read(text: string): MessageScan {
    const last = this._last;
    if (last !== undefined) {
      if (text === last.text) return copyOf(last.scan);
      // The last text ends with the bracket that closes its (non-empty) array: a text that has
      // everything before that bracket, then a comma, holds the same messages and then more.
      const cut = last.open.length;
      // (An equality of substrings, not `startsWith`: 0.06 against 0.9-5 µs for 2 KB.)
      if (text.length > cut && text.charCodeAt(cut) === COMMA && text.substring(0, cut) === last.open) {
        const more = readArray(`[${text.slice(cut + 1)}`);
        // (Nothing after the comma: the text is not JSON, as a whole parse would have found.)
        if (more !== undefined && more.length > 0) {
          const added: MessageScan = { calls: [], responses: [] };
          this._scanMessages(added, more);
          const scan = copyOf(last.scan);
          for (const call of added.calls) scan.calls.push(call);
          for (const response of added.responses) scan.responses.push(response);
          // The remembered scan keeps its own entries: the new ones are copied into it.
          const kept = copyOf(added);
          this._remember(text, {
            calls: kept.calls.length === 0 ? last.scan.calls : last.scan.calls.concat(kept.calls),
            responses:
              kept.responses.length === 0 ? last.scan.responses : last.scan.responses.concat(kept.responses),
          });
          return scan;
        }
      }
    }
    const messages = readArray(text);
    if (!messages) return { calls: [], responses: [] };
    const scan: MessageScan = { calls: [], responses: [] };
    this._scanMessages(scan, messages);
    if (messages.length > 0) this._remember(text, copyOf(scan));
    return scan;
  }

  private _remember(text: string, scan: MessageScan): void {
    this._last =
      text.length <= MAX_REMEMBERED && text.charCodeAt(text.length - 1) === CLOSE_BRACKET
        ? { text, open: text.slice(0, -1), scan }
        : undefined;
  }
}

/** A scan with its own arrays and entries (what callers get may be changed by them). */
function copyOf(scan: MessageScan): MessageScan {
  const calls: MessageCall[] = new Array(scan.calls.length);
  for (let i = 0; i < calls.length; i++) calls[i] = { ...scan.calls[i]! };
  const responses: RefusalFacts[] = new Array(scan.responses.length);
  for (let i = 0; i < responses.length; i++) responses[i] = { ...scan.responses[i]! };
  return { calls, responses };
}
