import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './helpers/app-process.ts';
import { outcomeOf, started } from './helpers/commands.ts';
import { composeEnv, filledEnvExample, imageEnv } from './helpers/deploy-files.ts';
import { startHarness, waitFor } from './helpers/harness.ts';

// The Dockerfile, built and run here. No image registry is reachable, so the base image is made
// locally (scripts/container-base.sh: debootstrap and this machine's Node). Containers cannot be
// started on these machines (crun fails), so the image's filesystem is mounted and its command
// run in a chroot, as the image's user, against the Slack stand-in and the simulator.

const root = new URL('..', import.meta.url).pathname;
const exec = promisify(execFile);
const IMAGE = 'localhost/slack-approvals:test';
// Named for the Debian suite and the Node that runs the tests, so a newer one of either makes a new
// base, not a stale one.
const BASE = `localhost/slack-approvals-node-base:trixie-${process.version}`;

const which = (command: string) =>
  spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).stdout.trim();
const has = (command: string) => which(command) !== '';
// Resolved here: the app's environment below has the image's PATH, not this machine's.
const chroot = which('chroot') || '/usr/sbin/chroot';
const skipReason =
  process.getuid?.() !== 0
    ? 'needs root (podman image mount, chroot)'
    : !has('podman') || !has('debootstrap')
      ? 'podman or debootstrap is not installed (.ci/run installs them)'
      : undefined;

/**
 * Holds a lock, machine-wide, until released (or this process ends): another suite running
 * beside this one (another checkout, another CI job) builds the same tag, and podman mounts an
 * image at one path for everyone, so two runs would bind their data folders over each other's.
 */
async function machineWideLock(): Promise<ChildProcess> {
  const holder = spawn(
    'flock',
    [
      '--exclusive',
      join(tmpdir(), 'slack-approvals-container-test.lock'),
      'sh',
      '-c',
      'echo held; exec cat',
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    holder.stdout?.once('data', () => resolve());
    holder.once('exit', (code) => reject(new Error(`flock exited ${code}`)));
  });
  return holder;
}

describe.skipIf(skipReason)(
  `the container image${skipReason ? ` (skipped: ${skipReason})` : ''}`,
  () => {
    let mounted = '';
    let data = '';
    let lock: ChildProcess | undefined;

    beforeAll(async () => {
      lock = await machineWideLock();
      await exec('bash', [join(root, 'scripts/container-base.sh'), BASE], { cwd: root });
      await exec(
        'podman',
        [
          'build',
          '--isolation',
          'chroot',
          '--format',
          'docker',
          '--build-arg',
          `BASE_IMAGE=${BASE}`,
          '-t',
          IMAGE,
          '.',
        ],
        { cwd: root, maxBuffer: 64 * 1024 * 1024 },
      );
      mounted = (await exec('podman', ['image', 'mount', IMAGE])).stdout.trim();
      // The image is mounted read-only; the data folder gets a writable one of its own.
      data = mkdtempSync(join(tmpdir(), 'image-data-'));
      await exec('chown', ['1000:1000', data]);
      await exec('mount', ['--bind', data, join(mounted, 'app/data')]);
    }, 900_000);

    afterAll(async () => {
      if (mounted) await exec('umount', [join(mounted, 'app/data')]).catch(() => undefined);
      await exec('podman', ['image', 'unmount', IMAGE]).catch(() => undefined);
      if (data) rmSync(data, { recursive: true, force: true });
      lock?.stdin?.end(); // cat ends, and flock lets the next run in
    });

    it('holds the compiled app and production dependencies only, runs as a non-root user, and checks /healthz', async () => {
      const [config] = JSON.parse((await exec('podman', ['image', 'inspect', IMAGE])).stdout) as [
        {
          Config: { User: string; Cmd: string[]; Env?: string[] };
          Healthcheck?: { Test: string[] };
        },
      ];
      expect(config.Config.User).toBe('1000:1000');
      // Debian's stable, as the official node:26-trixie-slim the Dockerfile names by default.
      expect(readFileSync(join(mounted, 'etc/os-release'), 'utf8')).toContain(
        'VERSION_CODENAME=trixie',
      );
      expect(config.Config.Cmd).toEqual(['node', '--max-semi-space-size=8', 'dist/main.js']);
      // Probes and metrics on the admin port, off the port Slack reaches; the check asks there.
      expect(config.Config.Env).toEqual(
        expect.arrayContaining([
          'PORT=3000',
          'ADMIN_PORT=9091',
          'ADMIN_HOST=0.0.0.0',
          'NODE_COMPILE_CACHE=/tmp/node-compile-cache',
        ]),
      );
      expect(config.Healthcheck?.Test.join(' ')).toContain('/healthz');
      expect(config.Healthcheck?.Test.join(' ')).toContain('process.env.ADMIN_PORT');
      const modules = join(mounted, 'app/node_modules');
      const installed = (name: string) => existsSync(join(modules, name, 'package.json'));
      expect(installed('better-sqlite3')).toBe(true);
      // The SQLite driver is prebuilt in its package: nothing was compiled in the image.
      expect(existsSync(join(modules, 'better-sqlite3/prebuilds/linux-x64.node'))).toBe(true);
      expect(existsSync(join(modules, 'better-sqlite3/build'))).toBe(false);
      for (const dev of ['typescript', 'tsx', 'vitest', '@biomejs/biome', 'playwright-core'])
        expect(installed(dev), dev).toBe(false);
      expect((await exec('ls', [modules])).stdout).not.toMatch(/^@vitest$/m);
      expect((await exec('ls', [join(mounted, 'app')])).stdout.split('\n')).not.toContain('src');
    });

    /** A shell command in the image's /app, as its user, with the image's environment. */
    const inImage = (command: string, env: Record<string, string> = {}) =>
      outcomeOf(
        exec(chroot, ['--userspec=1000:1000', mounted, '/bin/sh', '-c', `cd /app && ${command}`], {
          // No passwd entry for user 1000 in the image: HOME is / there, and not writable.
          env: { ...imageEnv(), PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/', ...env },
        }),
      );
    /** The image's command, as its user, with `env` as its whole environment. */
    const appInImage = (env: Record<string, string>) =>
      started(
        chroot,
        ['--userspec=1000:1000', mounted, '/bin/sh', '-c', 'cd /app && exec node dist/main.js'],
        { env },
      );

    it('runs the operator commands the docs and the alerts name, as its user, on its read-only filesystem', async () => {
      // --help needs nothing: not even a database that answers.
      const help = await inImage('npm run --silent announcements -- --help', {
        DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      });
      expect(help).toMatchObject({ code: 0 });
      expect(help.stdout).toContain('npm run announcements -- failed');
      for (const command of ['backup', 'migrate', 'accounts', 'report', 'people'])
        expect((await inImage(`npm run --silent ${command} -- --help`)).code, command).toBe(0);
      const migrated = await inImage('npm run --silent migrate');
      expect(migrated.stdout).toContain('is migrated');
      // Every command the alert rules tell on-call to run, as written (an id made up).
      const alerts = readFileSync(join(root, 'deploy/prometheus/alerts.yml'), 'utf8');
      const commands = [...alerts.matchAll(/`(npm run [^`]+)`/g)].map((m) => m[1] as string);
      expect(commands).toContain('npm run announcements -- failed');
      for (const command of commands) {
        const answer = await inImage(command.replace('<id>', 'AAAAAAAAAAAa:request'));
        expect(answer.stderr, command).not.toMatch(/not found|Cannot find|ERR/i);
        expect(answer.stdout, command).toMatch(/failed announcement|pending again/);
      }
      const backup = await inImage('npm run --silent backup -- /app/data/copy.db');
      expect(backup).toMatchObject({ code: 0 });
    }, 240_000);

    it('serves the admin listener beyond 127.0.0.1 with compose’s environment and a copy of .env.example', async () => {
      const h = await startHarness();
      const adminPort = await freePort();
      const env = {
        ...composeEnv(
          'app-1',
          filledEnvExample({
            SLACK_BOT_TOKEN: h.env.SLACK_BOT_TOKEN,
            SLACK_SIGNING_SECRET: h.env.SLACK_SIGNING_SECRET,
            APPROVAL_BASE_URL: h.env.APPROVAL_BASE_URL,
            APPROVAL_APP_NAME: h.env.APPROVAL_APP_NAME,
            APPROVAL_APP_KEY: h.env.APPROVAL_APP_KEY,
          }),
        ),
        // Not here: compose's Postgres host (SQLite stands in) and its fixed ports.
        SLACK_API_URL: h.env.SLACK_API_URL,
        DATABASE_URL: '/app/data/compose.db',
        PORT: String(await freePort()),
        ADMIN_PORT: String(adminPort),
        PATH: '/usr/local/bin:/usr/bin:/bin',
      };
      const app = appInImage(env);
      try {
        await waitFor(() => app.output().includes('slack-approvals is serving'), 120_000, 'start');
        // A listener on 127.0.0.1 alone refuses 127.0.0.2; the container's must not.
        expect((await fetch(`http://127.0.0.2:${adminPort}/metrics`)).status).toBe(200);
      } finally {
        await app.stop();
        await h.close();
      }
    }, 240_000);

    it('answers /healthz and /readyz from the image, as its user, against Slack and the service', async () => {
      const h = await startHarness();
      const port = await freePort();
      const env = {
        ...h.env,
        PORT: String(port),
        DATABASE_URL: '/app/data/approvals.db',
        PATH: '/usr/local/bin:/usr/bin:/bin',
        NODE_ENV: 'production',
      };
      const app = appInImage(env);
      try {
        await waitFor(() => app.output().includes('slack-approvals is serving'), 120_000, 'start');
        expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
        await waitFor(
          async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200,
          10_000,
          'readiness',
        );
      } finally {
        await app.stop();
        await h.close();
      }
    }, 240_000);
  },
);
