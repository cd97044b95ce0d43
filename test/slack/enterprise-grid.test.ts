import { describe, expect, it } from 'vitest';
import type { Enterprise } from '../../src/sandbox/workspace.ts';
import { harnessPerTest, isRequestMessage, waitFor } from '../helpers/harness.ts';

// Enterprise Grid, through the signed HTTP boundary: members have `W…` ids, and an app installed
// org-wide gets payloads naming the organization (`team: null`, `enterprise`,
// `is_enterprise_install: true`, `authorizations[].team_id: null`). A Grid member's whole story
// must work as anyone else's: command, form, submission, request, decision in the thread, Home.

const SAM = 'sam.taylor@corp.example';
const MARIA = 'maria.lopez@corp.example';
const installs: Array<[string, Enterprise]> = [
  ['installed org-wide', { id: 'E0GRID', name: 'Globular Construct', orgWideInstall: true }],
  [
    'installed to one workspace',
    { id: 'E0GRID', name: 'Globular Construct', orgWideInstall: false },
  ],
];

describe.each(installs)('an Enterprise Grid member, the app %s', (_how, enterprise) => {
  const harness = harnessPerTest();

  it('runs the whole story: /approve, the form, the request, the decision in its thread, App Home', async () => {
    const h = await harness({ enterprise });
    const sam = h.user(SAM);
    const maria = h.user(MARIA);
    expect(sam).toMatch(/^W/);
    expect(maria).toMatch(/^W/);

    const { approval, parent } = await h.startApproval(SAM, 'general', 'Grid storage node');
    expect(approval).toMatchObject({ requester: SAM, approver: MARIA, title: 'Grid storage node' });
    expect(parent.channel).toBe(h.channel('general'));
    // The approver's DM reached the approver by their W id.
    const approverDm = h.workspace.appDm(maria).id;
    expect(h.workspace.history(approverDm).some((m) => m.text.includes(approval.djbh))).toBe(true);

    h.sim.decide(approval.djbh, 'agree');
    await h.app.poll();
    await waitFor(
      () => h.workspace.replies(parent.channel, parent.ts).find((m) => m.text.includes('Approved')),
      5000,
      'the decision in the thread',
    );

    const home = await h.slack.event({
      type: 'app_home_opened',
      user: sam,
      channel: h.workspace.appDm(sam).id,
      tab: 'home',
    });
    expect(home.status).toBe(200);
    await waitFor(() => JSON.stringify(h.workspace.homes.get(sam) ?? '').includes(approval.djbh));
    const logged = h.logs.lines.join('\n');
    expect(logged).not.toContain('slack request refused');
    expect(logged).not.toMatch(/"level":(50|60)/);
  });

  it('posts in the member’s DM when no channel is picked, and says so', async () => {
    const h = await harness({ enterprise });
    const sam = h.user(SAM);
    expect((await h.slack.globalShortcut(sam, 'request_approval')).status).toBe(200);
    // Filled in: the person looked up and the approver suggested (submitting earlier is refused).
    const view = await waitFor(
      () =>
        [...h.workspace.views.values()].find(
          (v) => v.user === sam && JSON.stringify(v.view).includes('Suggested approver'),
        ),
      5000,
      'the filled-in form',
    );
    const before = h.sim.approvals().length;
    await h.slack.submitView(view.id, { title_input: 'Team offsite', note_input: 'Two days.' });
    const approval = await waitFor(() => h.sim.approvals()[before]);
    const request = await waitFor(() =>
      h.workspace.messages.find((m) => isRequestMessage(m, approval.djbh)),
    );
    expect(request.channel).toBe(h.workspace.appDm(sam).id);
    const result = await waitFor(
      () => {
        const shown = JSON.stringify(h.workspace.views.get(view.id)?.view);
        return shown.includes(approval.djbh) && shown;
      },
      5000,
      'the form saying where the request went',
    );
    // Not "the app is not a member of <#W…>": a W id is a person, whose DM was asked for.
    expect(result).toContain('The request is posted in your direct messages with the app');
    expect(result).not.toContain('not a member');
  });
});
