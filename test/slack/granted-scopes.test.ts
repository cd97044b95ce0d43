import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { harnessPerTest, waitFor } from '../helpers/harness.ts';

// A workspace that installed a leaner manifest (deploy/slack/): the app reads the scopes it was
// granted at start (Slack reports them with auth.test) and gives up, in one line of words, what
// needs the missing ones, instead of failing at it.

const harness = harnessPerTest();
const MINUTE = 60_000;
const scopesOf = (file: string) =>
  (
    parse(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8')) as {
      oauth_config: { scopes: { bot: string[] } };
    }
  ).oauth_config.scopes.bot;

function movableClock() {
  let offset = 0;
  return {
    now: () => new Date(Date.now() + offset),
    advance: (ms: number) => {
      offset += ms;
    },
  };
}

describe('the scopes the app was granted', () => {
  it('without the history scopes, says once at start which recovery it gives up, and posts again instead of searching', async () => {
    const clock = movableClock();
    const h = await harness({
      now: clock.now,
      grantedScopes: scopesOf('deploy/slack/manifest.without-history.yml'),
    });
    const givenUp = h.logs
      .entries()
      .filter((l) => String(l.msg).includes('cannot look for a post'));
    expect(givenUp).toHaveLength(1);
    expect(givenUp[0]).toMatchObject({
      level: 40,
      missingScopes: ['channels:history', 'groups:history', 'im:history'],
    });
    // A post Slack made, whose answer was lost: without history it cannot be found, so it is
    // posted again (what the line said), and nothing fails or errs over a missing scope.
    const general = h.channel('general');
    h.faults.failAfterCommit('chat.postMessage', 502);
    const view = await h.openModal('sam.taylor@corp.example');
    await h.slack.submitView(view.id, { note_input: 'n' });
    const approval = await waitFor(() => h.sim.approvals()[0], 5000, 'the approval');
    await waitFor(() => h.workspace.history(general).length === 1, 5000, 'the committed post');
    clock.advance(15 * MINUTE);
    await h.app.deliver();
    const requests = () =>
      h.workspace
        .history(general)
        .filter((m) => m.metadata?.event_payload.announcement_id === `${approval.djbh}:request`);
    await waitFor(() => requests().length === 2, 5000, 'the request posted again');
    expect(h.workspace.callsOf('conversations.history')).toEqual([]);
    expect(h.workspace.callsOf('conversations.replies')).toEqual([]);
    expect(h.logs.entries().filter((l) => Number(l.level) >= 50)).toEqual([]);
    expect(JSON.stringify(h.logs.entries())).not.toContain('missing_scope');
  });

  it('with every scope of manifest.yml, gives up nothing and says nothing about it', async () => {
    const h = await harness({ grantedScopes: scopesOf('manifest.yml') });
    expect(
      h.logs.entries().filter((l) => String(l.msg).includes('cannot look for a post')),
    ).toEqual([]);
  });

  it('without the workflow step, starts and serves /approve as before', async () => {
    const h = await harness({
      grantedScopes: scopesOf('deploy/slack/manifest.without-workflow-step.yml'),
    });
    const view = await h.openModal('sam.taylor@corp.example');
    await h.slack.submitView(view.id, { note_input: 'n' });
    await waitFor(() => h.workspace.history(h.channel('general')).length === 1, 5000, 'the post');
    expect(h.logs.entries().filter((l) => Number(l.level) >= 40)).toEqual([]);
  });
});
