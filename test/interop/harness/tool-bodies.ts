/** Tool bodies shared by every framework, so the same scenario does the same work everywhere. */

const TEMPERATURES: Record<string, number> = { Paris: 18, Tokyo: 22 };

export function getWeather({ city }: { city: string }): { city: string; tempC: number } {
  return { city, tempC: TEMPERATURES[city] ?? 20 };
}

export function celsiusToFahrenheit({ c }: { c: number }): { f: number } {
  return { f: (c * 9) / 5 + 32 };
}

/** Always fails; the declared result type is what the tool would return if the database were up. */
export function flakyDb(_args: { query: string }): { rows: string[] } {
  throw new Error('DB connection refused');
}
