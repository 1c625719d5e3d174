/** Longest agent or tool name a metric attribute (or a log-once key) keeps, in UTF-16 units. */
export const MAX_NAME_LENGTH = 256;

/**
 * An agent or tool name as metrics carry it: names come from span data, where a model can put
 * a tool name it made up (frameworks record calls to tools the agent does not have), and a
 * series keeps its attribute values for the life of the process; cut to `MAX_NAME_LENGTH`,
 * ending with `…`, so 2,000 series of hostile names hold at most ~1 MB rather than whatever
 * the names weigh. The span attributes and events keep the names whole.
 */
export function cappedName(name: string): string {
  if (name.length <= MAX_NAME_LENGTH) return name;
  let end = MAX_NAME_LENGTH - 1;
  // Never half of a surrogate pair.
  const last = name.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  // Copied unit by unit: a slice of a long string keeps the whole string alive in V8.
  const units = new Array<number>(end);
  for (let i = 0; i < end; i++) units[i] = name.charCodeAt(i);
  return `${String.fromCharCode(...units)}…`;
}
