/**
 * Text from input files made safe for a terminal: control bytes (C0, DEL, C1, and the
 * Unicode line/paragraph separators) escaped as `\xNN` / `\uNNNN`, and cut to `max`
 * characters, so a message about a hostile file can never move the cursor or flood a log.
 */
export function printable(text: string, max = 160): string {
  const cut = text.length > max ? `${text.slice(0, max)}…` : text;
  return cut.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (ch) => {
    const code = ch.charCodeAt(0);
    return code <= 0xff
      ? `\\x${code.toString(16).padStart(2, '0')}`
      : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/**
 * A whole report made safe for a terminal or a PR comment: control bytes escaped as in
 * `printable`, but tabs and line breaks kept and nothing cut. Agent, tool and rule names come
 * from span data, and a name carrying escape sequences must not clear the reader's screen.
 */
export function terminalText(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g, (ch) => {
    const code = ch.charCodeAt(0);
    return code <= 0xff
      ? `\\x${code.toString(16).padStart(2, '0')}`
      : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
