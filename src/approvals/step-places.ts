/*
 * Where approvals stand in requests in several steps (steps.ts), for the lists that show many at
 * once (`/approve list`, App Home): "Step 2 of 3" beside each step's approval.
 */

/** An approval's place in its request: step `position` of `steps`. */
export interface StepPlace {
  position: number;
  steps: number;
}

/** The store's read (store/chain-store.ts): the place of each of these approvals that is a step. */
export interface StepPlaces {
  placesOf(djbhs: readonly string[]): Promise<Map<string, StepPlace>>;
}

/** The places of these approvals, or none when the store cannot say: a list never fails for it. */
export async function placesOrNone(
  places: StepPlaces | undefined,
  approvals: ReadonlyArray<{ djbh: string }>,
): Promise<Map<string, StepPlace>> {
  if (!places || approvals.length === 0) return new Map();
  return places.placesOf(approvals.map((a) => a.djbh)).catch(() => new Map());
}
