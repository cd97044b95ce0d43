/** The rows `npm run bench` prints, one per measured case, each with its target and verdict. */
export const rows: Array<Record<string, string | number>> = [];

/** `ok (≤ target)` or `OVER (> target)`; `atLeast` for targets that are floors. */
export function verdict(value: number, target: number, atLeast = false): string {
  if (atLeast) return value >= target ? `ok (≥ ${target})` : `UNDER (< ${target})`;
  return value <= target ? `ok (≤ ${target})` : `OVER (> ${target})`;
}

export const quiet = { debug() {}, info() {}, warn() {}, error() {} };
