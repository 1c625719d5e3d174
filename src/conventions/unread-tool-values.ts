import { REDACTED, readArgs } from './read-values.js';
import type { ToolFacts } from './span-facts.js';

/**
 * Whether a tool span's values can be left unread: the result must not be able to make the
 * call a refusal (a validation failure is a JSON object whose message says so, which text
 * without that phrase or an escape cannot hold), since that decides what the span is.
 */
export function canLeaveUnread(rawResult: unknown): boolean {
  if (rawResult === undefined) return true;
  return (
    typeof rawResult === 'string' && !rawResult.includes('validation failed') && !rawResult.includes('\\')
  );
}

/** Reads arguments into `facts` (the eager reading: the same fields either way). */
export function readArgsInto(facts: ToolFacts, rawArgs: unknown): void {
  const args = readArgs(rawArgs);
  facts.usable = args.usable;
  if (args.args !== undefined) facts.args = args.args;
  if (args.argsRaw !== undefined) facts.argsRaw = args.argsRaw;
  if (args.argsError !== undefined) facts.argsError = args.argsError;
}

/** Reads arguments left unread (a no-op for facts read in full); the result stays unread. */
export function readUnreadArgs(facts: ToolFacts): void {
  const unread = facts.unread;
  if (unread === undefined) return;
  facts.unread = undefined;
  readArgsInto(facts, unread.args);
}

/** Whether the arguments, once read, give `args` or `argsRaw` (rule 7's `argsSource: span`). */
export function argsPresent(rawArgs: unknown): boolean {
  return rawArgs !== undefined && rawArgs !== null && rawArgs !== '' && rawArgs !== REDACTED;
}
