import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Harness, harnessPerTest, waitFor } from '../helpers/harness.ts';

// Accounts without cookies: `npm run accounts` run as its own process on the app's database while
// the app runs, and what people are told and what counts, through the app's HTTP endpoint with
// signed requests, under each ACCOUNT_LINKING.

const root = new URL('../..', import.meta.url).pathname;
const exec = promisify(execFile);
const harness = harnessPerTest();
// Slack shows Sam Taylor's personal address: not a login the approval service knows.
const PERSONAL = 'sam@personal.example';
const extraSlackUsers = [{ login: 'sam.personal', name: 'Sam T', email: PERSONAL }];

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'accounts-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** `npm run accounts -- …` as the entry point runs it, on the harness's database. */
function accounts(env: Record<string, string>, ...args: string[]) {
  return exec(process.execPath, ['--import', 'tsx', 'src/operator/accounts-cli.ts', ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...env },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, out: stdout + stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({
      code: e.code,
      out: e.stdout + e.stderr,
    }),
  );
}

// The harness's settings, as the operator's shell would have them.
const settings = (hh: Harness): Record<string, string | undefined> => hh.env;
const dbEnv = (hh: Harness) => ({
  DATABASE_URL: hh.env.DATABASE_URL,
  ACCOUNT_LINKING: settings(hh).ACCOUNT_LINKING ?? '',
});

/** An ephemeral answer to `/approve <text>` run by `login` in #general. */
async function answer(hh: Harness, login: string, text: string): Promise<string> {
  const userId = hh.workspace.userByLogin(login).id;
  const seen = hh.workspace.ephemeral(userId).length;
  const response = await hh.slack.command(userId, hh.channel('general'), text);
  expect(response.status).toBe(200);
  if (response.json?.text) return String(response.json.text);
  return (await waitFor(() => hh.workspace.ephemeral(userId)[seen], 5000, text)).text;
}

/** The approver the request form suggests to `login` (their login's leader), once filled in. */
async function suggested(hh: Harness, login: string): Promise<string> {
  const userId = hh.workspace.userByLogin(login).id;
  const before = new Set(hh.workspace.views.keys());
  await hh.slack.command(userId, hh.channel('general'), 'Laptop');
  const view = await waitFor(
    () =>
      [...hh.workspace.views.values()].find(
        (v) =>
          !before.has(v.id) &&
          v.user === userId &&
          /Suggested approver|does not know|pick one yourself/.test(JSON.stringify(v.view)),
      ),
    5000,
    'the filled-in form',
  );
  return JSON.stringify(view.view);
}

describe('npm run accounts', { timeout: 240_000 }, () => {
  it('answers --help without a database or any setting', async () => {
    const help = await accounts({ DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' }, '--help');
    expect(help.code).toBe(0);
    expect(help.out).toContain('npm run accounts -- import <file.csv>');
    const wrong = await accounts({}, 'add', 'U0ONLY');
    expect(wrong.code).toBe(2);
  });

  it('lets an admin link someone whose Slack e-mail is not their login, who then counts as that login', async () => {
    const hh = await harness({ extraSlackUsers, env: { ACCOUNT_LINKING: 'admin' } });
    const sam = hh.workspace.userByLogin(PERSONAL).id;
    // Before: the app takes the Slack e-mail, which the service does not know.
    expect(await suggested(hh, PERSONAL)).toContain('does not know sam@personal.example');

    // The person is told what to send an admin, and cannot link or unlink themselves.
    const told = await answer(hh, PERSONAL, 'link');
    expect(told).toContain('an admin links Slack accounts');
    expect(told).toContain(`\`${sam}\``);
    expect(told).toContain(`npm run accounts -- add ${sam} <your login>`);
    expect(
      [...hh.workspace.views.values()].some((v) => v.view.callback_id === 'link_account'),
    ).toBe(false);
    expect(await answer(hh, PERSONAL, 'unlink')).toContain('removed by an admin');
    const help = await answer(hh, PERSONAL, 'help');
    expect(help).toContain('what to ask an admin');
    expect(help).not.toContain('/approve unlink');

    const added = await accounts(dbEnv(hh), 'add', sam, 'sam.taylor@corp.example');
    expect(added).toEqual({ code: 0, out: `${sam} is now linked to sam.taylor@corp.example\n` });
    // Now Sam Taylor's login: the form suggests his leader.
    expect(await suggested(hh, PERSONAL)).toContain('Suggested approver: Maria Lopez');
    const list = await accounts(dbEnv(hh), 'list');
    expect(list.out).toContain(`${sam}\tsam.taylor@corp.example\tSAM.TAYLOR\t`);

    expect((await accounts(dbEnv(hh), 'remove', sam, 'U0NOBODY')).out).toBe(
      '1 link removed\nNot linked, nothing to remove: U0NOBODY (`list` shows the links)\n',
    );
    expect((await accounts(dbEnv(hh), 'remove', 'U0NOBODY')).code).toBe(1);
    expect(await suggested(hh, PERSONAL)).toContain('does not know sam@personal.example');
  });

  it('imports a CSV only when every row is right, and exports what it holds', async () => {
    const hh = await harness({ extraSlackUsers, env: { ACCOUNT_LINKING: 'admin' } });
    const sam = hh.workspace.userByLogin(PERSONAL).id;
    const bad = join(dir, 'bad.csv');
    writeFileSync(
      bad,
      `slack_user_id,login,name\n${sam},sam.taylor@corp.example,"Taylor, Sam"\nsam,x@corp.example,\nU0TWO,it's@corp.example,\n${sam},again@corp.example,\n`,
    );
    const refused = await accounts(dbEnv(hh), 'import', bad);
    expect(refused.code).toBe(1);
    expect(refused.out).toContain('Nothing imported');
    expect(refused.out).toContain('line 3: "sam" is not a Slack member ID');
    expect(refused.out).toContain('line 4: "it\'s@corp.example" is not a login');
    expect(refused.out).toContain(`line 5: ${sam} is on line 2 too`);
    expect((await accounts(dbEnv(hh), 'list')).out).toBe('0 linked accounts\n');

    const good = join(dir, 'good.csv');
    writeFileSync(
      good,
      `\uFEFFslack_user_id,login,name\r\n${sam},sam.taylor@corp.example,"Taylor, ""Sam"""\r\nU0OTHER,li.wei@corp.example,\r\n`,
    );
    expect((await accounts(dbEnv(hh), 'import', good)).out).toBe(
      `Imported ${good}: 2 added, 0 changed, 0 already so\n`,
    );
    expect((await accounts(dbEnv(hh), 'import', good)).out).toContain(
      '0 added, 0 changed, 2 already so',
    );
    expect(await suggested(hh, PERSONAL)).toContain('Suggested approver: Maria Lopez');

    const out = join(dir, 'links.csv');
    expect((await accounts(dbEnv(hh), 'export', out)).out).toBe(`2 links written to ${out}\n`);
    const csv = readFileSync(out, 'utf8').split('\n');
    expect(csv[0]).toBe('slack_user_id,login,name,team_id,linked_at');
    expect(csv).toContainEqual(expect.stringContaining('U0OTHER,li.wei@corp.example,LI.WEI,,'));
    expect(csv).toContainEqual(
      expect.stringContaining(`${sam},sam.taylor@corp.example,"Taylor, ""Sam""",,`),
    );
    // An export never overwrites a file; to stdout it prints the same.
    expect((await accounts(dbEnv(hh), 'export', out)).code).toBe(2);
    expect((await accounts(dbEnv(hh), 'export')).out.split('\n')[0]).toBe(csv[0]);
    // Eight runs of the compiled command, each a process of its own: seconds apiece on a busy machine.
  }, 240_000);

  it('with ACCOUNT_LINKING=admin tells a linked person that an admin’s link gives their login, not their e-mail', async () => {
    const hh = await harness({ extraSlackUsers, env: { ACCOUNT_LINKING: 'admin' } });
    const sam = hh.workspace.userByLogin(PERSONAL).id;
    await accounts(dbEnv(hh), 'add', sam, 'sam.taylor@corp.example');
    const told = await answer(hh, PERSONAL, 'link');
    expect(told).toContain(
      'The app uses *sam.taylor@corp.example* now: an admin linked your Slack account to it.',
    );
    expect(told).not.toContain('your Slack e-mail');
    // Unlinked, the e-mail is the login again, and said so.
    await accounts(dbEnv(hh), 'remove', sam);
    expect(await answer(hh, PERSONAL, 'link')).toContain(
      `The app uses *${PERSONAL}* (your Slack e-mail) now.`,
    );
  });

  it('with ACCOUNT_LINKING=off adds nobody, uses no earlier link, and says the e-mail is the login', async () => {
    const hh = await harness({ extraSlackUsers, env: { ACCOUNT_LINKING: 'admin' } });
    const sam = hh.workspace.userByLogin(PERSONAL).id;
    await accounts(dbEnv(hh), 'add', sam, 'sam.taylor@corp.example');
    settings(hh).ACCOUNT_LINKING = 'off';
    await hh.restart();
    const refused = await accounts(dbEnv(hh), 'add', sam, 'li.wei@corp.example');
    expect(refused.code).toBe(2);
    expect(refused.out).toContain('ACCOUNT_LINKING=off');
    expect(await suggested(hh, PERSONAL)).toContain('does not know sam@personal.example');
    expect(await answer(hh, PERSONAL, 'link')).toContain(
      'Linking accounts is turned off in this workspace: your login in the approval service is your Slack e-mail, *sam@personal.example*',
    );
    expect(await answer(hh, PERSONAL, 'help')).toContain('linking another is turned off');
    // Home says the same: the e-mail, not the link kept from before.
    const published = hh.workspace.callsOf('views.publish').length;
    await hh.slack.event({ type: 'app_home_opened', user: sam, channel: 'D0HOME', tab: 'home' });
    await waitFor(() => hh.workspace.callsOf('views.publish').length > published);
    const home = JSON.stringify(hh.workspace.homes.get(sam));
    expect(home).not.toContain('Linked to the approval service');
    expect(home).toContain(`Your approval-service login: ${PERSONAL} (from your Slack e-mail).`);
  });

  it('links nobody from a session-token form opened before ACCOUNT_LINKING became admin', async () => {
    const hh = await harness({ extraSlackUsers, env: { ACCOUNT_LINKING: 'self' } });
    const userId = hh.workspace.userByLogin(PERSONAL).id;
    await hh.slack.command(userId, hh.channel('general'), 'link');
    const form = await waitFor(() =>
      [...hh.workspace.views.values()].find(
        (v) => v.user === userId && v.view.callback_id === 'link_account',
      ),
    );
    settings(hh).ACCOUNT_LINKING = 'admin';
    await hh.restart();
    const token = hh.sim.people.find((p) => p.login === 'sam.taylor@corp.example')?.token ?? '';
    const { response } = await hh.slack.submitView(form.id, { session_token_input: token });
    expect(JSON.stringify(response.json)).toContain('an admin links Slack accounts');
    expect((await accounts(dbEnv(hh), 'list')).out).toBe('0 linked accounts\n');
  });

  it('by default (admin) opens no form that takes a session token, and says who links', async () => {
    const hh = await harness({ extraSlackUsers });
    const userId = hh.workspace.userByLogin(PERSONAL).id;
    const told = await answer(hh, PERSONAL, 'link');
    expect(told).toContain(userId);
    expect(told).toContain('admin');
    expect(
      [...hh.workspace.views.values()].some(
        (v) => v.user === userId && v.view.callback_id === 'link_account',
      ),
    ).toBe(false);
  });

  it('with ACCOUNT_LINKING=self (an opt-in) still opens the form that takes a session token', async () => {
    const hh = await harness({ extraSlackUsers, env: { ACCOUNT_LINKING: 'self' } });
    await answer(hh, PERSONAL, 'help').then((help) => {
      expect(help).toContain('*/approve link* — link your approval-service account');
      expect(help).toContain('*/approve unlink*');
    });
    const userId = hh.workspace.userByLogin(PERSONAL).id;
    await hh.slack.command(userId, hh.channel('general'), 'link');
    await waitFor(() =>
      [...hh.workspace.views.values()].find(
        (v) => v.user === userId && v.view.callback_id === 'link_account',
      ),
    );
  });
});
