/**
 * Cases per property: `FC_NUM_RUNS` when set (a longer hunt for a rare case, or one case to
 * replay a seed quickly), else the `n` the test chose. fast-check's global numRuns cannot do it:
 * a test's own numRuns wins over it.
 */
export function runs(n: number): number {
  const given = Number(process.env.FC_NUM_RUNS);
  return Number.isInteger(given) && given > 0 ? given : n;
}
