import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Delegation,
  delegateFor,
  inForce,
  knownDelegate,
} from '../../src/approvals/delegation.ts';
import { loginKey, sameLogin } from '../../src/approvals/person.ts';

// The rule of who gets a new request for someone away, over generated delegations: chains,
// cycles, expired ones, the requester anywhere in the chain, logins in any case.

const NOW = new Date('2026-11-23T10:00:00Z');
const PEOPLE = ['a@x', 'b@x', 'c@x', 'd@x', 'e@x', 'f@x'];
const spelled = (login: string, upper: boolean) => (upper ? login.toUpperCase() : login);

const delegationArb: fc.Arbitrary<Delegation> = fc
  .record({
    from: fc.constantFrom(...PEOPLE),
    to: fc.constantFrom(...PEOPLE),
    // Some ended already, some end exactly now (ended), most later.
    untilMinutes: fc.integer({ min: -600, max: 6000 }),
    upper: fc.boolean(),
  })
  .filter((d) => d.from !== d.to)
  .map((d) => ({
    from: spelled(d.from, d.upper),
    to: d.to,
    until: new Date(NOW.getTime() + d.untilMinutes * 60_000),
    setAt: NOW,
  }));

/** One delegation per person (the store keeps one), the last one given winning. */
const onePerPerson = (list: Delegation[]) => [
  ...new Map(list.map((d) => [loginKey(d.from), d])).values(),
];

const scenario = fc.record({
  delegations: fc.array(delegationArb, { maxLength: 12 }).map(onePerPerson),
  person: fc.constantFrom(...PEOPLE),
  requester: fc.option(fc.constantFrom(...PEOPLE), { nil: null }),
});

/** The in-force delegation of `login`, if any: what the walk may follow next. */
const next = (delegations: Delegation[], login: string) =>
  delegations.find((d) => sameLogin(d.from, login) && inForce(d, NOW));

describe('delegateFor', () => {
  it('ends, never on the requester once it moved, and only through delegations in force that chain', () => {
    fc.assert(
      fc.property(scenario, ({ delegations, person, requester }) => {
        const { approver, via } = delegateFor(person, delegations, NOW, requester);
        // The walk is a chain: from the person, each step the in-force delegation of the last.
        let at = person;
        for (const step of via) {
          expect(step).toBe(next(delegations, at));
          at = step.to;
        }
        expect(sameLogin(approver, at) || (via.length === 0 && approver === person)).toBe(true);
        // Never a loop: nobody twice on the way.
        const seen = [person, ...via.map((d) => d.to)].map(loginKey);
        expect(new Set(seen).size).toBe(seen.length);
        // A delegate is never the requester.
        if (via.length > 0) expect(sameLogin(approver, requester)).toBe(false);
        // Expired delegations are never followed.
        for (const step of via) expect(inForce(step, NOW)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('goes to the end of the chain, unless that is the requester or someone already passed', () => {
    fc.assert(
      fc.property(scenario, ({ delegations, person, requester }) => {
        const { approver, via } = delegateFor(person, delegations, NOW, requester);
        if (sameLogin(person, requester)) return;
        const onward = next(delegations, approver);
        const passed = [person, ...via.map((d) => d.to)];
        // Where it stopped, the way on is none, or back to someone passed, or to the requester
        // (who is then passed over only by the requester's own delegate, already tried).
        if (onward) {
          const back = passed.some((p) => sameLogin(p, onward.to));
          expect(back || sameLogin(onward.to, requester)).toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
  });

  const d = (from: string, to: string, minutes = 60): Delegation => ({
    from,
    to,
    until: new Date(NOW.getTime() + minutes * 60_000),
    setAt: NOW,
  });

  it('follows A → B → C to C', () => {
    expect(delegateFor('a@x', [d('a@x', 'b@x'), d('b@x', 'c@x')], NOW, 'r@x')).toMatchObject({
      approver: 'c@x',
      via: [{ to: 'b@x' }, { to: 'c@x' }],
    });
  });

  it('ends a cycle at the last person before it comes back (A → B → A: B)', () => {
    expect(delegateFor('a@x', [d('a@x', 'b@x'), d('b@x', 'a@x')], NOW, 'r@x').approver).toBe('b@x');
    expect(
      delegateFor('a@x', [d('a@x', 'b@x'), d('b@x', 'c@x'), d('c@x', 'b@x')], NOW, 'r@x').approver,
    ).toBe('c@x');
  });

  it('passes the requester on to their own delegate, or stops before them', () => {
    expect(delegateFor('a@x', [d('a@x', 'r@x'), d('r@x', 'c@x')], NOW, 'R@X').approver).toBe('c@x');
    expect(delegateFor('a@x', [d('a@x', 'b@x'), d('b@x', 'r@x')], NOW, 'r@x').approver).toBe('b@x');
    expect(delegateFor('a@x', [d('a@x', 'r@x')], NOW, 'r@x')).toEqual({
      approver: 'a@x',
      via: [],
    });
  });

  it('ignores an ended delegation, and one ending at this very moment', () => {
    expect(delegateFor('a@x', [d('a@x', 'b@x', -1)], NOW, null).approver).toBe('a@x');
    expect(delegateFor('a@x', [d('a@x', 'b@x', 0)], NOW, null).approver).toBe('a@x');
    expect(delegateFor('A@X', [d('a@x', 'b@x', 1)], NOW, null).approver).toBe('b@x');
  });
});

describe('knownDelegate: a delegate the service no longer knows', () => {
  const d = (from: string, to: string): Delegation => ({
    from,
    to,
    until: new Date(NOW.getTime() + 3_600_000),
    setAt: NOW,
  });
  /** The service's directory: `known` have a department; anyone else gets its made-up defaults. */
  const directory = (known: string[], down = false) => ({
    asked: [] as string[],
    async getDepartment(login: string) {
      this.asked.push(login);
      if (down) throw new Error('unreachable');
      const filled = known.includes(login) ? 'Storage' : '';
      const leaders = { subDepartment: '', department: '', productLine: '' };
      return {
        login,
        name: login.split('@')[0] ?? login,
        mobile: '',
        productLine: '',
        department: filled,
        subDepartment: '',
        leaders,
      };
    },
  });
  const chain = [d('a@x', 'b@x'), d('b@x', 'r@x'), d('r@x', 'c@x')];

  it('cuts the chain back to the last one it knows, skipping the requester, the person at worst', async () => {
    const found = delegateFor('a@x', chain, NOW, 'r@x');
    expect(found.approver).toBe('c@x');
    expect(await knownDelegate(directory(['b@x', 'c@x']), 'a@x', found, 'r@x')).toEqual(found);
    // c left: the requester is passed over, to b.
    expect(await knownDelegate(directory(['b@x', 'r@x']), 'a@x', found, 'r@x')).toMatchObject({
      approver: 'b@x',
      via: [{ to: 'b@x' }],
    });
    expect(await knownDelegate(directory(['r@x']), 'a@x', found, 'r@x')).toEqual({
      approver: 'a@x',
      via: [],
    });
  });

  it('keeps the delegate when the directory cannot be asked, and asks nothing when nobody is delegated to', async () => {
    const found = delegateFor('a@x', [d('a@x', 'b@x')], NOW, null);
    expect((await knownDelegate(directory([], true), 'a@x', found, null)).approver).toBe('b@x');
    const none = directory([]);
    expect(await knownDelegate(none, 'a@x', { approver: 'a@x', via: [] }, null)).toEqual({
      approver: 'a@x',
      via: [],
    });
    expect(none.asked).toEqual([]);
  });
});
