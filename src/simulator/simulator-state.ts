import { randomInt } from 'node:crypto';
import type { Person } from './directory.ts';

export type SimulatorDecision = 'pending' | 'approved' | 'rejected';

export interface SimulatedApproval {
  djbh: string;
  title: string;
  note: string;
  requester: string;
  approver: string;
  decision: SimulatorDecision;
  created: string;
  decided: string | null;
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
// A logged-out session still resolves from the service's cache for about a minute.
const PROFILE_CACHE_MS = 60_000;

/** What the simulated service knows: its people, their sessions, and the approvals. In memory. */
export class SimulatorState {
  readonly people: Person[];
  readonly approvals = new Map<string, SimulatedApproval>();
  private readonly byLogin: Map<string, Person>;
  private readonly byToken: Map<string, Person>;
  private readonly loggedOut = new Map<string, { person: Person; until: number }>();

  constructor(
    people: Person[],
    readonly now: () => Date,
  ) {
    // Copies: logging out changes a person's token, which must not leak into a shared directory.
    this.people = people.map((p) => ({ ...p }));
    this.byLogin = new Map(this.people.map((p) => [p.login, p]));
    this.byToken = new Map(this.people.map((p) => [p.token, p]));
  }

  person(login: string): Person | undefined {
    return this.byLogin.get(login);
  }

  /** The person behind a session token, including one logged out less than a minute ago. */
  personBySession(token: string): Person | undefined {
    const cached = this.loggedOut.get(token);
    return (
      this.byToken.get(token) ??
      (cached && this.now().getTime() < cached.until ? cached.person : undefined)
    );
  }

  /** A new approval number: 11 letters or digits and a final lower-case letter, as the service makes. */
  newDjbh(): string {
    for (;;) {
      const id = randomString(11) + String.fromCharCode(97 + randomInt(26));
      if (!this.approvals.has(id)) return id;
    }
  }

  /** Acts as the approver. The first decision wins; later ones are ignored. */
  decide(djbh: string, decision: 'agree' | 'refuse'): SimulatedApproval | undefined {
    const approval = this.approvals.get(djbh);
    if (!approval) return undefined;
    if (approval.decision === 'pending') {
      approval.decision = decision === 'agree' ? 'approved' : 'rejected';
      approval.decided = this.now().toISOString();
    }
    return { ...approval };
  }

  /** Gives a pending approval to another approver, as the service's administrators can. */
  reassign(djbh: string, approverLogin: string): SimulatedApproval | undefined {
    const approval = this.approvals.get(djbh);
    if (!approval) return undefined;
    if (approval.decision === 'pending') approval.approver = approverLogin;
    return { ...approval };
  }

  /** Ends a person's session: a new token replaces theirs; the old one lingers in the cache. */
  logout(login: string): Person | undefined {
    const person = this.byLogin.get(login);
    if (!person) return undefined;
    this.loggedOut.set(person.token, { person, until: this.now().getTime() + PROFILE_CACHE_MS });
    this.byToken.delete(person.token);
    person.token = randomString(64);
    this.byToken.set(person.token, person);
    return person;
  }

  list(): SimulatedApproval[] {
    return [...this.approvals.values()].map((a) => ({ ...a }));
  }
}

function randomString(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return out;
}
