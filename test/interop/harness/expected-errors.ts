import { format } from 'node:util';

/**
 * Runs `fn` with the console lines that match `expected` held back instead of printed: a
 * framework that logs an error a scenario provokes on purpose (Mastra 0.24 logs "Tool
 * launchRockets not found" with a stack trace) would otherwise make a clean test run read as a
 * failing one. Lines that match nothing still reach the console. Returns the held lines, for
 * the test to assert that the framework really complained.
 */
export async function withExpectedErrors<T>(
  expected: RegExp | undefined,
  fn: () => Promise<T>,
): Promise<{ value: T; held: string[] }> {
  const held: string[] = [];
  if (!expected) return { value: await fn(), held };
  const original = { error: console.error, warn: console.warn };
  const filter =
    (write: (...args: unknown[]) => void) =>
    (...args: unknown[]) => {
      const line = format(...args);
      if (expected.test(line)) held.push(line);
      else write(...args);
    };
  console.error = filter(original.error);
  console.warn = filter(original.warn);
  try {
    return { value: await fn(), held };
  } finally {
    console.error = original.error;
    console.warn = original.warn;
  }
}
