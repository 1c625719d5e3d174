/** Which verdicts the gateway logs: those that did not pass (default), every one, or none. */
export type VerdictLogging = 'failing' | 'all' | 'none';

export type LogFormat = 'text' | 'json';

/** One thing the gateway reports: a constant message and its attributes. */
export interface GatewayLogRecord {
  level: 'info' | 'warn';
  msg: string;
  attributes: Record<string, string | number | boolean | readonly string[]>;
}

/** Where the gateway core sends its log records; `toolwatch serve` writes them to stderr. */
export type GatewayLogger = (record: GatewayLogRecord) => void;

/** Longest attribute value a text line carries; span data chooses these values. */
const MAX_VALUE_LENGTH = 256;
const PLAIN = /^[\w.:/@#,+-]*$/;

/**
 * A record as one line: `text` is `toolwatch serve: <level> <msg>: key=value …` (a value with
 * anything but word characters and `.:/@#,+-` JSON-quoted, so span data can neither break a
 * line nor fake a key); `json` is one object per line (`time`, `level`, `msg`, then the
 * attributes), as the Collector's JSON logs read.
 */
export function formatLogRecord(record: GatewayLogRecord, format: LogFormat, time: Date): string {
  if (format === 'json') {
    return `${JSON.stringify({ time: time.toISOString(), level: record.level, msg: record.msg, ...record.attributes })}\n`;
  }
  let line = `toolwatch serve: ${record.level} ${record.msg}:`;
  for (const [key, value] of Object.entries(record.attributes)) {
    let text = Array.isArray(value) ? value.join(',') : String(value);
    if (text.length > MAX_VALUE_LENGTH) text = `${text.slice(0, MAX_VALUE_LENGTH - 1)}…`;
    line += ` ${key}=${PLAIN.test(text) && text !== '' ? text : JSON.stringify(text)}`;
  }
  return `${line}\n`;
}
