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
