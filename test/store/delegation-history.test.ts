import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Delegation, delegateFor, inForce } from '../../src/approvals/delegation.ts';
import { loginKey } from '../../src/approvals/person.ts';
import { type DatabaseHandle, openDatabase } from '../../src/store/database.ts';
import { createDelegationStore } from '../../src/store/delegation-store.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';

// Generated histories of delegates while away: people set, replace and clear them, time passes,
// the app restarts (the store reopened on the same database). After every step, who a new request
// for anyone goes to, read from the real store, is what a plain model of the history says.

const PEOPLE = ['a@x', 'B@x', 'c@x', 'd@x'];
const T0 = new Date('2026-11-23T10:00:00Z').getTime();
const HOUR = 3_600_000;

type Op =
  | { kind: 'set'; from: string; to: string; hours: number }
  | { kind: 'clear'; from: string }
  | { kind: 'wait'; hours: number }
  | { kind: 'restart' };

const person = fc.constantFrom(...PEOPLE);
const op: fc.Arbitrary<Op> = fc.oneof(
  fc
    .record({
      kind: fc.constant('set' as const),
      from: person,
      to: person,
      hours: fc.integer({ min: 1, max: 48 }),
    })
    .filter((o) => loginKey(o.from) !== loginKey(o.to)),
  fc.record({ kind: fc.constant('clear' as const), from: person }),
  fc.record({ kind: fc.constant('wait' as const), hours: fc.integer({ min: 1, max: 24 }) }),
  fc.constant({ kind: 'restart' as const }),
);

for (const database of TEST_DATABASES) {
  describe.skipIf(database.skipReason)(`histories of delegates on ${database.name}`, () => {
    let created: { url: string; drop(): Promise<void> };
    let handle: DatabaseHandle;
    beforeAll(async () => {
      created = await database.create();
      handle = await openDatabase(created.url);
    });
    afterAll(async () => {
      await handle?.close();
      await created?.drop();
    });

    it('always sends a new request where the model of the history says', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 25 }), async (ops) => {
          await handle.db.deleteFrom('delegations').execute();
          let store = createDelegationStore(handle.db);
          const model = new Map<string, Delegation>();
          let now = T0;
          for (const o of ops) {
            if (o.kind === 'set') {
              const d = {
                from: o.from,
                to: o.to,
                until: new Date(now + o.hours * HOUR),
                setAt: new Date(now),
              };
              await store.set(d);
              model.set(loginKey(o.from), d);
            } else if (o.kind === 'clear') {
              expect(await store.clear(o.from)).toBe(model.delete(loginKey(o.from)));
            } else if (o.kind === 'wait') {
              now += o.hours * HOUR;
            } else {
              await handle.close();
              handle = await openDatabase(created.url);
              store = createDelegationStore(handle.db);
            }
            const at = new Date(now);
            const stored = await store.inForceAt(at);
            const modelled = [...model.values()].filter((d) => inForce(d, at));
            for (const p of PEOPLE)
              for (const requester of [null, ...PEOPLE])
                expect(delegateFor(p, stored, at, requester)).toEqual(
                  delegateFor(p, modelled, at, requester),
                );
          }
        }),
        { numRuns: database.name === 'postgres' ? 15 : 40 },
      );
    }, 120_000);
  });
}
