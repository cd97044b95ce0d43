import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyProject } from './helpers/commands.ts';

// `npm start` (scripts/start.mjs) compiles only when the sources changed, and two starts in one
// folder never break each other. Run on a copy of the project, so the real dist/ is not touched.

const root = new URL('..', import.meta.url).pathname;
const copy = join(root, 'test-artifacts', `start-${process.pid}`);
const exec = promisify(execFile);

beforeAll(() => copyProject(copy));
afterAll(() => rmSync(copy, { recursive: true, force: true }));

const build = () =>
  exec(process.execPath, ['scripts/start.mjs', '--build-only'], { cwd: copy }).then(
    ({ stderr }) => ({ compiled: stderr.includes('Compiling the app') }),
  );

describe('npm start', { timeout: 240_000 }, () => {
  it('compiles on the first start and when a source changed, and not otherwise', async () => {
    expect(await build()).toEqual({ compiled: true });
    expect(existsSync(join(copy, 'dist/main.js'))).toBe(true);
    const first = statSync(join(copy, 'dist/main.js')).ino;
    expect(await build()).toEqual({ compiled: false });
    expect(statSync(join(copy, 'dist/main.js')).ino).toBe(first);
    // Rewritten as it was (a checkout, a formatter): its times changed, its content did not.
    writeFileSync(join(copy, 'src/config.ts'), readFileSync(join(copy, 'src/config.ts')));
    expect(await build()).toEqual({ compiled: false });
    expect(statSync(join(copy, 'dist/main.js')).ino).toBe(first);
    writeFileSync(
      join(copy, 'src/errors.ts'),
      `${'// changed\n'}${await import('node:fs').then((fs) => fs.readFileSync(join(root, 'src/errors.ts'), 'utf8'))}`,
    );
    expect(await build()).toEqual({ compiled: true });
    expect(statSync(join(copy, 'dist/main.js')).ino).not.toBe(first);
  }, 240_000);

  it('lets two starts in one folder run at once: one compiles, the other waits for it', async () => {
    writeFileSync(join(copy, 'src/changed-again.ts'), 'export const x = 1;\n');
    const both = await Promise.all([build(), build()]);
    expect(both.filter((b) => b.compiled)).toHaveLength(1);
    expect(existsSync(join(copy, 'dist/main.js'))).toBe(true);
    expect(existsSync(join(copy, 'dist/changed-again.js'))).toBe(true);
    // Nothing half-built or locked is left behind.
    expect(readdirSync(copy).filter((f) => f.startsWith('dist.') || f === '.build-lock')).toEqual(
      [],
    );
  }, 240_000);

  it('takes over a build lock left by a start that died, even when its pid is in use again', async () => {
    writeFileSync(join(copy, 'src/changed-once-more.ts'), 'export const y = 2;\n');
    mkdirSync(join(copy, '.build-lock'));
    // The pid of a live process: this test's own, as after a reboot gave it to someone else.
    writeFileSync(join(copy, '.build-lock/pid'), String(process.pid));
    const old = new Date(Date.now() - 11 * 60_000);
    utimesSync(join(copy, '.build-lock'), old, old);
    expect(await build()).toEqual({ compiled: true });
    expect(existsSync(join(copy, 'dist/changed-once-more.js'))).toBe(true);
    expect(existsSync(join(copy, '.build-lock'))).toBe(false);
  }, 240_000);
});
