import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyProject, outcomeOf } from '../helpers/commands.ts';

// The operator commands where only production dependencies are installed, as on a server that got
// a build and `npm ci --omit=dev` (the image does the same: build, then prune). A copy of the
// project is built with the dev dependencies, which are then replaced by production ones only.

const root = new URL('../..', import.meta.url).pathname;
const copy = join(root, 'test-artifacts', `production-${process.pid}`);
const data = join(copy, 'operator-data');
const exec = promisify(execFile);

beforeAll(async () => {
  copyProject(copy);
  await exec(process.execPath, ['scripts/start.mjs', '--build-only'], { cwd: copy });
  unlinkSync(join(copy, 'node_modules'));
  // From npm's cache when it holds them (it does after the project's own install).
  await exec(
    'npm',
    ['ci', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'],
    { cwd: copy, maxBuffer: 16 * 1024 * 1024 },
  );
  mkdirSync(data);
}, 300_000);
afterAll(() => rmSync(copy, { recursive: true, force: true }));

/** `npm run <script> -- args` in the copy, with a home npm cannot write to, as in the image. */
async function npmRun(script: string, args: string[], env: Record<string, string> = {}) {
  const home = join(copy, 'read-only-home');
  mkdirSync(home, { recursive: true });
  chmodSync(home, 0o555);
  return outcomeOf(
    exec('npm', ['run', '--silent', script, '--', ...args], {
      cwd: copy,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        NPM_CONFIG_UPDATE_NOTIFIER: 'false',
        ...env,
      },
    }),
  );
}

describe('the operator commands with production dependencies only', { timeout: 240_000 }, () => {
  it('has no dev dependency to lean on', () => {
    for (const dev of ['typescript', 'tsx', 'vitest'])
      expect(existsSync(join(copy, 'node_modules', dev)), dev).toBe(false);
    expect(existsSync(join(copy, 'node_modules/better-sqlite3'))).toBe(true);
  });

  it('answers --help of each command without a database or any setting', async () => {
    // A DATABASE_URL nothing answers on: --help must not try it.
    const env = { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' };
    for (const [script, words] of [
      ['announcements', 'npm run announcements -- failed'],
      ['backup', 'npm run backup -- <new file>'],
      ['migrate', 'npm run migrate'],
      ['accounts', 'npm run accounts -- import <file.csv>'],
      ['delegations', 'npm run delegations -- clear <login>'],
    ] as const) {
      const answer = await npmRun(script, ['--help'], env);
      expect(answer, script).toMatchObject({ code: 0, stderr: '' });
      expect(answer.stdout, script).toContain(words);
    }
  }, 240_000);

  it('migrates, lists failed announcements and backs up, on the compiled build', async () => {
    const env = { DATABASE_URL: join(data, 'approvals.db') };
    const migrated = await npmRun('migrate', [], env);
    expect(migrated.stderr).toBe('');
    expect(migrated).toMatchObject({ code: 0 });
    expect(migrated.stdout).toMatch(/^The database at .*approvals\.db is migrated: \d+ migrations/);
    // Run again it has nothing to do, and says the same.
    expect((await npmRun('migrate', [], env)).code).toBe(0);

    expect(await npmRun('announcements', ['failed'], env)).toMatchObject({
      code: 0,
      stdout: '0 failed announcements\n',
    });
    const backup = await npmRun('backup', [join(data, 'copy.db')], env);
    expect(backup).toMatchObject({ code: 0, stderr: '' });
    expect(existsSync(join(data, 'copy.db'))).toBe(true);
  }, 240_000);

  it('runs the build that is there when src/ changed and no compiler can rebuild it, and says so', async () => {
    writeFileSync(join(copy, 'src/changed-here.ts'), 'export const z = 3;\n');
    const answer = await npmRun('announcements', ['failed'], {
      DATABASE_URL: join(data, 'approvals.db'),
    });
    expect(answer.code).toBe(0);
    expect(answer.stderr).toContain('dist/ was not built from the sources in src/');
    expect(answer.stdout).toBe('0 failed announcements\n');
  }, 240_000);
});
