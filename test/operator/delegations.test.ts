import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { setDelegate } from '../helpers/delegate-forms.ts';
import { harnessPerTest } from '../helpers/harness.ts';

// `npm run delegations` as an admin runs it: the compiled command, as its own process, on the
// app's database while the app runs; what it clears counts for the next request at once.

const root = new URL('../..', import.meta.url).pathname;
const exec = promisify(execFile);
const harness = harnessPerTest();
const NOW = new Date('2026-11-23T10:00:00Z');
const MARIA = 'maria.lopez@corp.example';
const ALEX = 'alex.kim@corp.example';

function delegations(env: Record<string, string | undefined>, ...args: string[]) {
  return exec('npm', ['run', '--silent', 'delegations', '--', ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, out: stdout, err: stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({
      code: e.code,
      out: e.stdout,
      err: e.stderr,
    }),
  );
}

describe('npm run delegations', () => {
  it('answers --help without a database or any setting, and a mistake with the usage', async () => {
    const help = await delegations(
      { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' },
      '--help',
    );
    // The first run may say on stderr that it compiles the app first.
    expect(help.code).toBe(0);
    expect(help.out).toContain('npm run delegations -- clear <login>');
    const wrong = await delegations(
      { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' },
      'clear',
    );
    expect(wrong.code).toBe(2);
    expect(wrong.err).toContain('npm run delegations -- list');
  }, 120_000);

  it('lists what people set on Home, and clears one so new requests go to them again', async () => {
    const hh = await harness({ now: () => NOW });
    await setDelegate(hh, MARIA, ALEX, '2026-12-03');
    const env = { DATABASE_URL: hh.env.DATABASE_URL };
    const listed = await delegations(env, 'list');
    expect(listed.code).toBe(0);
    expect(listed.out).toContain('1 delegation\n');
    // Until the start of 3 Dec in the person's zone (Asia/Shanghai in the stand-in).
    expect(listed.out).toContain(`${MARIA}\t→ ${ALEX}\tuntil 2026-12-02T16:00:00.000Z\t`);

    const cleared = await delegations(env, 'clear', 'Maria.Lopez@corp.example');
    expect(cleared).toMatchObject({ code: 0, out: 'Cleared: Maria.Lopez@corp.example\n' });
    const view = await hh.openModal('sam.taylor@corp.example');
    expect(JSON.stringify(view.view)).toContain(`"initial_user":"${hh.user(MARIA)}"`);
    expect((await delegations(env, 'list')).out).toBe('0 delegations\n');

    const again = await delegations(env, 'clear', MARIA);
    expect(again.code).toBe(1);
    expect(again.out).toContain(`No delegation, nothing to clear: ${MARIA}`);
  }, 120_000);
});
