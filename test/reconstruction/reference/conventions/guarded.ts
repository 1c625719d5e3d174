/**
 * Wraps a span reader so that it never throws: a span of an unexpected shape (attributes
 * that are not a record, a missing name) yields `fallback`, as "not mine" or "nothing found".
 */
export function guarded<A, R>(read: (arg: A) => R, fallback: R): (arg: A) => R {
  return (arg: A): R => {
    try {
      return read(arg);
    } catch {
      return fallback;
    }
  };
}
