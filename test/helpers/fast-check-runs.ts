/**
 * Cases per property: the `n` the test chose, or `FC_NUM_RUNS` when that is more (a longer hunt
 * for a rare case; fewer would starve the tests that check they generated enough to say
 * something). fast-check's global numRuns cannot do it: a test's own numRuns wins over it.
 */
export function runs(n: number): number {
  const given = Number(process.env.FC_NUM_RUNS);
  return Number.isInteger(given) && given > n ? given : n;
}
