import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sameLogin } from '../../src/approvals/person.ts';
import type { Message } from '../../src/sandbox/workspace.ts';
import { createAccountLinkStore } from '../../src/store/account-link-store.ts';
import { openDatabase } from '../../src/store/database.ts';
import { createTemplateStore } from '../../src/store/template-store.ts';
import { type Harness, startHarness, waitFor } from '../helpers/harness.ts';

// The audience invariant, over generated histories: for every message the app sends (as the
// Slack stand-in received it), everyone who can read it may see the approval it is about, or the
// message carries neither its title nor its note. "May see" is checked two ways:
// - by a model of the rule written here: the approval's requester, its approvers (the one asked
//   and whoever the service gave it to), the leader it was escalated to, and the members of the
//   conversation its request was posted in, when its requester was a member there as it was
//   posted (their own DM included);
// - by the app itself: each such reader asks `/approve status <number>` and must be shown it, so
//   what the app sends on its own and what it shows when asked never disagree.
// Someone told in their own DM keeps the message, so both must go on holding for them at every
// later step (a former approver after a handover, the leader it was escalated to); a channel's
// reader who left it is no longer shown it, as the rule says.
// Histories mix public and private channels, requests only ever in a DM, people joining and
// leaving the private channel, a request from the private channel's template (its default approver
// is someone outside it), reassignment, rejection, Request again, and time passing (reminders,
// escalation to the approver's leader). Each run starts the whole product (harness.ts); three
// histories are always tried first: the Request again after leaving, the escalation of a
// private channel's request, and a request the service hands on twice (each approver gets its DM,
// and who had it before may still see it: WHO_MAY's former approver). A failure prints fast-check's seed and the history.
// People move between Slack accounts too: Andy, whose Slack e-mail the service does not know, is
// linked to someone's login (by an admin, or by himself with a session of the service), the link
// is changed or removed (by an admin, or by Andy), and ACCOUNT_LINKING is changed (a restart).
// Whoever reads a message is the login the app should take them for at that moment (their link,
// unless links are off; else their e-mail), so a DM to an account that no longer is the approver
// fails the invariant; a message naming several approvals (the digest) is checked for each; and
// Andy is shown by /approve status exactly what the login he is now may see.

const HOUR = 3_600_000;
const SAM = 'sam.taylor@corp.example'; // approver: Maria Lopez, whose leader is Chen Hao
const ALEX = 'alex.kim@corp.example'; // approver: Liu Yang, whose leader is Priya Nair
const PRIYA = 'priya.nair@corp.example';
const LI = 'li.wei@corp.example';
const OLIVIA = 'olivia.brown@corp.example'; // the private channel's template's default approver
const REQUESTERS = [SAM, ALEX] as const;
const MEMBERS = [SAM, ALEX, PRIYA, LI] as const;
const PLACES = ['general', 'project', 'random'] as const; // public, private, the app not in it
const MARIA = 'maria.lopez@corp.example';
const ANDY = 'andy@personal.example'; // a Slack account whose e-mail the service does not know
const LINKABLE = [MARIA, PRIYA, LI, OLIVIA] as const;

type Action =
  | { kind: 'start'; by: (typeof REQUESTERS)[number]; in: (typeof PLACES)[number] }
  | { kind: 'template'; by: (typeof REQUESTERS)[number] }
  | { kind: 'join' | 'leave'; who: (typeof MEMBERS)[number] }
  | { kind: 'reassign'; nth: number; to: typeof PRIYA | typeof LI }
  | { kind: 'reject' | 'again'; nth: number }
  | { kind: 'link'; to: (typeof LINKABLE)[number]; by: 'admin' | 'person' }
  | { kind: 'unlink'; by: 'admin' | 'person' }
  | { kind: 'linking'; mode: 'self' | 'off' }
  | { kind: 'wait' };

const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('start' as const),
      by: fc.constantFrom(...REQUESTERS),
      in: fc.constantFrom(...PLACES),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constantFrom('join' as const, 'leave' as const),
      who: fc.constantFrom(...MEMBERS),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('reassign' as const),
      nth: fc.nat(3),
      to: fc.constantFrom(PRIYA, LI),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constantFrom('reject' as const, 'again' as const),
      nth: fc.nat(3),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: 'wait' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('link' as const),
      to: fc.constantFrom(...LINKABLE),
      by: fc.constantFrom('admin' as const, 'person' as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('unlink' as const),
      by: fc.constantFrom('admin' as const, 'person' as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('linking' as const),
      mode: fc.constantFrom('self' as const, 'off' as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('template' as const),
      by: fc.constantFrom(...REQUESTERS),
    }),
  },
);
const history = fc.record({
  // Who is in the private channel at first, besides the app.
  project: fc.subarray([...MEMBERS], { minLength: 1 }),
  actions: fc.array(action, { minLength: 1, maxLength: 8 }),
});

/** What the model knows of one approval the history started. */
interface Known {
  djbh: string;
  title: string;
  requester: string;
  approvers: Set<string>;
  /** Where its request was posted, and whether its requester could read there as it was. */
  posted?: { channel: string; legit: boolean };
}

// The five fixed histories, then one generated (fast-check counts the fixed ones among the runs).
const RUNS = Number(process.env.AUDIENCE_RUNS ?? 6);

describe('the audience of everything the app sends', () => {
  it('lets nobody read an approval’s title or note whom the policy does not let see it', async () => {
    await fc.assert(
      fc.asyncProperty(history, async (h) => {
        const run = await Run.start(h.project);
        try {
          for (const a of h.actions) {
            await run.apply(a);
            await run.check();
          }
        } finally {
          await run.close();
        }
      }),
      {
        numRuns: RUNS,
        endOnFailure: true,
        examples: [
          // Sam asks in the private channel, is rejected, leaves, and asks again.
          [
            {
              project: [SAM, PRIYA],
              actions: [
                { kind: 'start', by: SAM, in: 'project' },
                { kind: 'reject', nth: 0 },
                { kind: 'leave', who: SAM },
                { kind: 'again', nth: 0 },
              ],
            },
          ],
          // Alex asks in the private channel, Sam from its template (Olivia Brown approves);
          // nobody answers, and each approver's leader is told.
          [
            {
              project: [ALEX, SAM],
              actions: [
                { kind: 'start', by: ALEX, in: 'project' },
                { kind: 'template', by: SAM },
                { kind: 'wait' },
                { kind: 'wait' },
              ],
            },
          ],
          // An admin links Andy to Maria's login by mistake; Sam asks in the private channel and
          // in #general (Maria approves both), the link is removed: no reminder, no digest of
          // the private request goes to Andy. Maria links Andy's account herself, then links are
          // turned off: nothing more reaches Andy either.
          [
            {
              project: [SAM, PRIYA],
              actions: [
                { kind: 'link', to: MARIA, by: 'admin' },
                { kind: 'start', by: SAM, in: 'project' },
                { kind: 'start', by: SAM, in: 'general' },
                { kind: 'unlink', by: 'admin' },
                { kind: 'wait' },
                { kind: 'link', to: MARIA, by: 'person' },
                { kind: 'linking', mode: 'off' },
                { kind: 'wait' },
              ],
            },
          ],
          // Alex's request in the private channel is escalated to Priya, Liu's leader, while
          // Andy has linked himself to Priya's login: he is told as Priya; once he unlinks
          // himself, nothing more of it reaches him.
          [
            {
              project: [ALEX, SAM, PRIYA],
              actions: [
                { kind: 'start', by: ALEX, in: 'project' },
                { kind: 'link', to: PRIYA, by: 'person' },
                { kind: 'wait' },
                { kind: 'wait' },
                { kind: 'unlink', by: 'person' },
                { kind: 'wait' },
              ],
            },
          ],
          // Sam asks in the private channel; the service gives it to Li, outside it, then to
          // Priya: each gets the approver's DM, and Li, who read it, may still see it.
          [
            {
              project: [SAM, PRIYA],
              actions: [
                { kind: 'start', by: SAM, in: 'project' },
                { kind: 'reassign', nth: 0, to: LI },
                { kind: 'wait' },
                { kind: 'reassign', nth: 0, to: PRIYA },
                { kind: 'wait' },
                { kind: 'wait' },
              ],
            },
          ],
        ],
      },
    );
  }, 600_000);
});

class Run {
  private offset = 0;
  private seen = 0;
  private n = 0;
  private readonly known: Known[] = [];
  /** Andy's link (a login) as the model knows it, and ACCOUNT_LINKING now. */
  private linked: string | undefined;
  private linking: 'self' | 'off' = 'self';
  /** `/approve status` answers already asked, by `<djbh> <user id>`, within one step. */
  private shown = new Map<string, boolean>();
  /**
   * Who was sent an approval's title in their own DM, as `<djbh> <login>`: that person keeps it,
   * so the app keeps showing it to them at every later step (a former approver, after a handover,
   * too), on the account that is theirs by e-mail. A person is their login: an account linked to
   * it and unlinked since is no longer them.
   */
  private readonly toldInDm = new Map<string, { k: Known; login: string }>();
  private template = '';

  private constructor(private readonly hh: Harness) {}

  static async start(project: string[]): Promise<Run> {
    let run: Run | undefined;
    const hh = await startHarness({
      now: () => new Date(Date.now() + (run?.offset ?? 0)),
      extraSlackUsers: [{ login: 'andy', name: 'Andy Wrong', email: ANDY, locale: 'en-US' }],
      env: {
        ACCOUNT_LINKING: 'self',
        REMINDER_AFTER_HOURS: '1',
        REMINDER_INTERVAL_HOURS: '1',
        REMINDER_MAX: '3',
        ESCALATE_AFTER_REMINDERS: '1',
      },
    });
    run = new Run(hh);
    const members = new Set([...project.map((l) => hh.user(l)), hh.workspace.botUserId]);
    const channel = hh.workspace.addChannel('project', 'private', members);
    // The channel's template names a default approver who is not in the channel.
    const db = await openDatabase(hh.env.DATABASE_URL);
    try {
      const added = await createTemplateStore(db.db, db.dialect).add(
        channel.id,
        {
          name: 'Access',
          titlePrefix: '[Access]',
          noteSkeleton: 'System:',
          approverChatId: hh.user(OLIVIA),
        },
        hh.user(SAM),
        new Date(),
      );
      if (!added.ok) throw new Error('the template was not added');
      run.template = added.template.id;
    } finally {
      await db.close();
    }
    return run;
  }

  close(): Promise<void> {
    return this.hh.close();
  }

  private nth(nth: number): Known | undefined {
    return this.known.length ? this.known[nth % this.known.length] : undefined;
  }

  private members(name: string): Set<string> {
    return this.hh.workspace.channelByName(name).members;
  }

  async apply(a: Action): Promise<void> {
    const hh = this.hh;
    switch (a.kind) {
      case 'start': {
        // Slack runs a command only where the person is.
        if (a.in === 'project' && !this.members('project').has(hh.user(a.by))) return;
        const title = `Case ${++this.n} of ${a.by.split('.')[0]}`;
        const { approval } = await hh.startApproval(a.by, a.in, title);
        this.known.push({
          djbh: approval.djbh,
          title,
          requester: a.by,
          approvers: new Set([approval.approver]),
        });
        return;
      }
      case 'template':
        return this.fromTemplate(a.by);
      case 'join':
      case 'leave': {
        const members = this.members('project');
        if (a.kind === 'join') members.add(hh.user(a.who));
        else members.delete(hh.user(a.who));
        // Past the app's cached member lists: it sees the change from now on.
        this.offset += 61_000;
        return;
      }
      case 'reassign': {
        const k = this.nth(a.nth);
        if (!k || k.requester === a.to) return;
        if (hh.sim.reassign(k.djbh, a.to)) k.approvers.add(a.to);
        return;
      }
      case 'reject': {
        const k = this.nth(a.nth);
        if (!k) return;
        hh.sim.decide(k.djbh, 'refuse');
        await hh.app.poll(this.now());
        return;
      }
      case 'wait':
        this.offset += 1.1 * HOUR;
        await hh.app.poll(this.now());
        return;
      case 'again':
        return this.requestAgain(a.nth);
      case 'link':
        return this.link(a.to, a.by);
      case 'unlink':
        return this.unlink(a.by);
      case 'linking':
        // Changing ACCOUNT_LINKING is a restart with the new setting.
        if (a.mode === this.linking) return;
        (hh.env as Record<string, string>).ACCOUNT_LINKING = a.mode;
        await hh.restart();
        this.linking = a.mode;
        return;
    }
  }

  /** The login the app should take a Slack user for now: their link, unless off; their e-mail. */
  private loginOf(userId: string): string {
    const linksUsed = this.linking !== 'off' && this.linked !== undefined;
    if (userId === this.hh.user(ANDY) && linksUsed && this.linked) return this.linked;
    const email = this.hh.workspace.users.get(userId)?.email ?? userId;
    // One login, one person: while Andy holds a login by a link, the account whose e-mail it is
    // is nobody in the approval service.
    if (linksUsed && this.linked && sameLogin(this.linked, email)) return `nobody (${userId})`;
    return email;
  }

  /** Whose account a login is now: Andy's while he holds it by a link, else its e-mail's. */
  private accountOf(login: string): string {
    if (this.linking !== 'off' && this.linked && sameLogin(this.linked, login))
      return this.hh.user(ANDY);
    return this.hh.user(login);
  }

  /** Andy is linked to `login`: by an admin (what `npm run accounts` writes), or by himself. */
  private async link(login: string, by: 'admin' | 'person'): Promise<void> {
    const hh = this.hh;
    // Links are made only where ACCOUNT_LINKING lets anyone make them.
    if (this.linking === 'off') return;
    const andy = hh.user(ANDY);
    if (by === 'admin') {
      await this.withLinks((links) =>
        links.link({
          slackUserId: andy,
          teamId: hh.workspace.teamId,
          login,
          name: 'X',
          linkedAt: this.now(),
        }),
      );
    } else {
      const token = hh.sim.people.find((p) => p.login === login)?.token ?? '';
      const views = new Set(hh.workspace.views.keys());
      await hh.slack.command(andy, hh.channel('general'), 'link');
      const form = await waitFor(
        () =>
          [...hh.workspace.views.values()].find(
            (v) => !views.has(v.id) && v.user === andy && v.view.callback_id === 'link_account',
          ),
        5000,
        'the link form',
      );
      await hh.slack.submitView(form.id, { session_token_input: token });
      await waitFor(
        () => JSON.stringify(hh.workspace.views.get(form.id)?.view).includes('Linked as'),
        8000,
        'the link',
      );
    }
    this.linked = login;
  }

  /** Andy's link is removed: by an admin, or by himself with `/approve unlink`. */
  private async unlink(by: 'admin' | 'person'): Promise<void> {
    const hh = this.hh;
    if (this.linking === 'off' || !this.linked) return;
    const andy = hh.user(ANDY);
    if (by === 'admin') await this.withLinks((links) => links.unlink(andy));
    else {
      const seen = hh.workspace.ephemeral(andy).length;
      await hh.slack.command(andy, hh.channel('general'), 'unlink');
      await waitFor(() => hh.workspace.ephemeral(andy)[seen], 5000, 'the unlink answer');
    }
    this.linked = undefined;
  }

  private async withLinks<T>(
    use: (links: ReturnType<typeof createAccountLinkStore>) => Promise<T>,
  ): Promise<T> {
    const db = await openDatabase(this.hh.env.DATABASE_URL);
    try {
      return await use(createAccountLinkStore(db.db, db.dialect));
    } finally {
      await db.close();
    }
  }

  private now(): Date {
    return new Date(Date.now() + this.offset);
  }

  /** A request from the private channel's template, by a member of it. */
  private async fromTemplate(by: string): Promise<void> {
    const hh = this.hh;
    if (!this.members('project').has(hh.user(by))) return;
    const title = `Case ${++this.n} of ${by.split('.')[0]}`;
    const before = hh.sim.approvals().length;
    const form = await hh.openModal(by, 'project', title);
    const hash = form.hash;
    await hh.slack.selectOption(hh.user(by), form.id, 'template_select', this.template, {});
    const filled = await waitFor(
      () => {
        const v = hh.workspace.views.get(form.id);
        return v && v.hash !== hash ? v : undefined;
      },
      5000,
      'the form refilled',
    );
    await hh.slack.submitView(filled.id, { note_input: 'For the audit' });
    const approval = await waitFor(() => hh.sim.approvals()[before], 8000, 'the approval');
    // The template was applied: its prefix and its default approver.
    expect(approval).toMatchObject({ title: `[Access] ${title}`, approver: OLIVIA });
    await waitFor(
      () =>
        hh.workspace.messages.find((m) =>
          JSON.stringify(m.metadata ?? {}).includes(`${approval.djbh}:approver-dm`),
        ),
      8000,
      'the approver DM',
    );
    this.known.push({
      djbh: approval.djbh,
      title,
      requester: by,
      approvers: new Set([approval.approver]),
    });
  }

  /** Request again on an approval rejected and not yet asked again, by its requester. */
  private async requestAgain(nth: number): Promise<void> {
    const hh = this.hh;
    const k = this.nth(nth);
    const old = k && hh.sim.approvals().find((a) => a.djbh === k.djbh);
    if (!k || !old || old.decision !== 'rejected') return;
    if (this.known.some((x) => x.title === k.title && x !== k)) return;
    const requester = hh.user(k.requester);
    const before = hh.sim.approvals().length;
    const views = new Set(hh.workspace.views.keys());
    await hh.slack.blockAction(
      requester,
      { action_id: 'request_again', value: k.djbh },
      {
        channelId: hh.workspace.appDm(requester).id,
        messageTs: '1.000001',
      },
    );
    const form = await waitFor(
      () =>
        [...hh.workspace.views.values()].find(
          (v) =>
            !views.has(v.id) &&
            v.user === requester &&
            JSON.stringify(v.view).includes(k.title) &&
            !JSON.stringify(v.view).includes('hourglass'),
        ),
      8000,
      'the Request again form',
    );
    await hh.slack.submitView(form.id, {});
    const again = await waitFor(() => hh.sim.approvals()[before], 8000, 'the new approval');
    await waitFor(
      () =>
        hh.workspace.messages.find((m) =>
          JSON.stringify(m.metadata ?? {}).includes(`${again.djbh}:request`),
        ),
      8000,
      'the new request message',
    );
    await hh.app.deliver(this.now());
    this.known.push({
      djbh: again.djbh,
      title: k.title,
      requester: k.requester,
      approvers: new Set([again.approver]),
    });
  }

  /** The invariant, over what the app sent since the last check. */
  async check(): Promise<void> {
    const hh = this.hh;
    this.shown.clear();
    const messages = hh.workspace.messages.slice(this.seen);
    this.seen = hh.workspace.messages.length;
    const escalated = await this.escalatedTo();
    for (const m of messages) {
      if (m.ephemeralTo || m.user !== hh.workspace.botUserId) continue;
      for (const k of this.about(m)) await this.checkMessage(m, k, escalated);
    }
    await this.checkToldInDm(escalated);
    await this.checkMovingAccount(escalated);
  }

  /**
   * Andy's account, whose login moves with his links and ACCOUNT_LINKING: the app shows him an
   * approval exactly when the model lets the login he is now see it, neither more (an account
   * unlinked from a login, or taken for its e-mail once links are off, is no longer that person)
   * nor less.
   */
  private async checkMovingAccount(escalated: Map<string, string>): Promise<void> {
    const andy = this.hh.user(ANDY);
    const login = this.loginOf(andy);
    for (const k of this.known) {
      const shown = await this.appShows(k, andy);
      expect(shown, `Andy (${login}) asks /approve status of “${k.title}” (${k.djbh})`).toBe(
        this.modelMaySee(k, andy, login, escalated.get(k.djbh)),
      );
    }
  }

  /** The invariant for one message and one approval it names. */
  private async checkMessage(m: Message, k: Known, escalated: Map<string, string>): Promise<void> {
    const hh = this.hh;
    {
      const channel = hh.workspace.channels.get(m.channel);
      expect(channel, `the channel of ${m.ts}`).toBeDefined();
      const readers = [...(channel?.members ?? [])].filter((u) => u !== hh.workspace.botUserId);
      if (
        String(m.metadata?.event_payload.announcement_id ?? '').endsWith(':request') &&
        !k.posted
      ) {
        const requester = hh.user(k.requester);
        k.posted = { channel: m.channel, legit: readers.includes(requester) };
      }
      for (const reader of readers) {
        const login = this.loginOf(reader);
        if (channel?.kind === 'im') this.toldInDm.set(`${k.djbh} ${login}`, { k, login });
        const model = this.modelMaySee(k, reader, login, escalated.get(k.djbh));
        expect(
          model,
          `${reader} (${login}) reads “${k.title}” (${k.djbh}) in ${channel?.kind} ${channel?.name}, which the rule does not let them see`,
        ).toBe(true);
        expect(
          await this.appShows(k, reader),
          `${reader} (${login}) was sent “${k.title}” (${k.djbh}) but /approve status does not show it to them`,
        ).toBe(true);
      }
    }
  }

  /** Everyone once told in their DM may still see it, by the model and by the app. */
  private async checkToldInDm(escalated: Map<string, string>): Promise<void> {
    for (const { k, login } of this.toldInDm.values()) {
      // Asked on the account that is the login's now (Andy's own login is nobody's party).
      const reader = this.accountOf(login);
      expect(
        this.modelMaySee(k, reader, login, escalated.get(k.djbh)),
        `${login} was told of “${k.title}” (${k.djbh}) in their DM, which the rule no longer lets them see`,
      ).toBe(true);
      expect(
        await this.appShows(k, reader),
        `${login} was told of “${k.title}” (${k.djbh}) in their DM, but /approve status no longer shows it to them`,
      ).toBe(true);
    }
  }

  /**
   * The approvals a message carries the title of (its note goes with it): the one it is about,
   * and any other it names (a digest lists several), each by its number and title.
   */
  private about(m: Message): Known[] {
    const all = JSON.stringify([m.text, m.blocks]);
    const djbh = String(m.metadata?.event_payload.djbh ?? '');
    const own =
      this.known.find((x) => x.djbh === djbh) ?? this.known.find((x) => all.includes(x.djbh));
    const named = this.known.filter(
      (x) => x !== own && all.includes(x.djbh) && all.includes(x.title),
    );
    return [...(own && all.includes(own.title) ? [own] : []), ...named];
  }

  private modelMaySee(
    k: Known,
    reader: string,
    login: string,
    leader: string | undefined,
  ): boolean {
    if (login === k.requester || k.approvers.has(login) || sameLogin(login, leader)) return true;
    const posted = k.posted;
    return Boolean(
      posted?.legit && this.hh.workspace.channels.get(posted.channel)?.members.has(reader),
    );
  }

  private async appShows(k: Known, userId: string): Promise<boolean> {
    const key = `${k.djbh} ${userId}`;
    const cached = this.shown.get(key);
    if (cached !== undefined) return cached;
    const hh = this.hh;
    const seen = hh.workspace.ephemeral(userId).length;
    await hh.slack.command(userId, hh.channel('general'), `status ${k.djbh}`);
    const answer = await waitFor(() => hh.workspace.ephemeral(userId)[seen], 5000, 'the answer');
    const shown = JSON.stringify(answer).includes(k.title);
    this.shown.set(key, shown);
    return shown;
  }

  /** Whose login each approval was escalated to, as the app recorded it (WHO_MAY reads the same). */
  private async escalatedTo(): Promise<Map<string, string>> {
    const db = await openDatabase(this.hh.env.DATABASE_URL);
    try {
      const rows = await db.db
        .selectFrom('tracked_approvals')
        .select(['djbh', 'escalated_to_login'])
        .where('escalated_to_login', 'is not', null)
        .execute();
      return new Map(rows.map((r) => [r.djbh, r.escalated_to_login ?? '']));
    } finally {
      await db.close();
    }
  }
}
