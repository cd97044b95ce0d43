import { describe, expect, it } from 'vitest';
import { nextCheckAfterFailure, nextCheckAt } from '../../src/approvals/check-schedule.ts';

const options = { maxIntervalMs: 60 * 60_000 };
const created = new Date('2026-11-21T00:00:00Z');
const at = (ms: number) => new Date(created.getTime() + ms);
const MIN = 60_000;

describe('check schedule', () => {
  it('checks an approval younger than 10 minutes at every tick', () => {
    expect(nextCheckAt(created, at(9 * MIN), options)).toEqual(at(9 * MIN + 1));
  });

  it('backs off to a tenth of the age once older', () => {
    expect(nextCheckAt(created, at(10 * MIN), options)).toEqual(at(11 * MIN));
    expect(nextCheckAt(created, at(60 * MIN), options)).toEqual(at(66 * MIN));
  });

  it('never waits longer than the cap', () => {
    expect(nextCheckAt(created, at(48 * 60 * MIN), options)).toEqual(at(49 * 60 * MIN));
  });

  it('retries a failed check after 30 s, doubling, up to the cap', () => {
    const now = at(0);
    expect(nextCheckAfterFailure(1, now, options)).toEqual(at(30_000));
    expect(nextCheckAfterFailure(2, now, options)).toEqual(at(60_000));
    expect(nextCheckAfterFailure(3, now, options)).toEqual(at(120_000));
    expect(nextCheckAfterFailure(20, now, options)).toEqual(at(60 * MIN));
  });
});
