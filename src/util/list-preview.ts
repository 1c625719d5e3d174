const LIST_PREVIEW = 20;

/** Names joined for a message, bounded for runs with thousands of calls. */
export function listPreview(names: readonly string[]): string {
  if (names.length <= LIST_PREVIEW) return names.join(', ');
  return `${names.slice(0, LIST_PREVIEW).join(', ')}, … (${names.length - LIST_PREVIEW} more)`;
}
