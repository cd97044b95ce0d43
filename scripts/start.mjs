// `npm start` and every operator command: runs a compiled entry point of the app from dist/
// (main.js, or `--entry operator/cli.js` and the like), building it first only when its sources
// changed since the last build. `npm run build` (`--build-only`) builds without running.
//   node scripts/start.mjs [--build-only | --entry <file in dist>] [arguments of the entry…]
//
// Why compiled, not run from src/ by Node's type stripping: production runs dist/ (the image holds
// no src/), and an operator command must run the very code of the app it operates on, in the image
// as on a laptop. Where there is no src/ (the image, a built artifact) or no compiler (only
// production dependencies installed), what dist/ holds runs as it is.
//
// Why not `rm -rf dist && tsc` at every start: a supervisor restarting the app after a crash
// waited for a full compile each time (7–8 s on 2 cores), and two starts in one folder deleted
// each other's output. Here a build is compared by a hash of its inputs, made in a folder of its
// own, and swapped in by renames, under a lock that one start holds while the others wait.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { enableCompileCache } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
// Node keeps the compiled code of the app and its dependencies on disk: loading modules was most
// of a restart's time, and a restart after kill -9 must answer /healthz within a second
// (bench/README). The app writes it once serving (main.ts), not only at a clean exit, so a
// process that was killed leaves it too. In the app's own folder (or NODE_COMPILE_CACHE), not the
// shared temporary one, where another user of the host could create the folder first and plant
// compiled code. Where the folder cannot be written, Node runs without it.
enableCompileCache(
  process.env.NODE_COMPILE_CACHE ?? join(root, 'node_modules/.cache/node-compile-cache'),
);
const dist = join(root, 'dist');
const stampFile = join(dist, '.build-stamp');
const filesFile = join(dist, '.build-files');
const lock = join(root, '.build-lock');
const INPUTS = [
  'src',
  'tsconfig.json',
  'tsconfig.build.json',
  'scripts/copy-assets.mjs',
  'scripts/bundle.mjs',
  'package-lock.json',
];

/** A hash of everything the build reads, by path and content. */
function sourceStamp() {
  const hash = createHash('sha256');
  const add = (path) => {
    if (!existsSync(path)) return;
    if (statSync(path).isDirectory()) {
      for (const entry of readdirSync(path).sort()) add(join(path, entry));
      return;
    }
    hash.update(relative(root, path)).update('\0').update(readFileSync(path)).update('\0');
  };
  for (const input of INPUTS) add(join(root, input));
  return hash.digest('hex');
}

/**
 * The inputs as the file system describes them (path, size, inode, change and modification
 * times): read in a few milliseconds where hashing their content takes tens, on every start. Any
 * write to a file changes its change time, which no tool sets back. Equal to what the last build
 * recorded, nothing changed; otherwise the content decides, so a checkout that rewrote the files
 * as they were compiles nothing.
 */
function filesStamp() {
  const hash = createHash('sha256');
  const add = (path) => {
    if (!existsSync(path)) return;
    const stat = statSync(path);
    if (stat.isDirectory()) {
      for (const entry of readdirSync(path).sort()) add(join(path, entry));
      return;
    }
    hash.update(
      `${relative(root, path)}\0${stat.size}\0${stat.ino}\0${stat.ctimeMs}\0${stat.mtimeMs}\0`,
    );
  };
  for (const input of INPUTS) add(join(root, input));
  return hash.digest('hex');
}

const read = (file) => (existsSync(file) ? readFileSync(file, 'utf8') : undefined);
const built = () => read(stampFile);

/** Records what the inputs look like for the next start; where dist/ is read-only, it hashes. */
function rememberFiles(files) {
  const next = `${filesFile}.${process.pid}`;
  try {
    writeFileSync(next, files);
    renameSync(next, filesFile);
  } catch {
    rmSync(next, { force: true });
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

// A build takes well under this; a lock older was left by a start that died (a reboot can give
// its pid to another process, so the pid alone cannot tell).
const STALE_LOCK_MS = 10 * 60_000;

/** Takes the build lock (a folder holding the builder's pid), waiting while a live start holds it. */
async function takeLock() {
  let told = false;
  for (const deadline = Date.now() + 300_000; Date.now() < deadline; ) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      return;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      const holder = Number(readFileSync(join(lock, 'pid'), { encoding: 'utf8', flag: 'a+' }));
      const age = Date.now() - statSync(lock).mtimeMs;
      if ((holder && !alive(holder)) || holder === process.pid || age > STALE_LOCK_MS) {
        // Left by a start that died: taken over (renamed first, so two waiters cannot both do it).
        const stale = `${lock}.stale-${process.pid}`;
        try {
          renameSync(lock, stale);
          rmSync(stale, { recursive: true, force: true });
        } catch {}
        continue;
      }
      if (!told) {
        process.stderr.write(`Waiting for another start (pid ${holder}) to finish compiling…\n`);
        told = true;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  throw new Error(`another start has been building for 5 minutes (${lock}); remove it if stale`);
}

class BuildError extends Error {}

function run(args) {
  const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) throw new BuildError(`${args.join(' ')} exited ${result.status}`);
}

async function build(stamp, files) {
  await takeLock();
  try {
    if (built() === stamp) return; // another start built it while this one waited
    process.stderr.write('Compiling the app (sources changed since the last build)…\n');
    const next = join(root, `dist.build-${process.pid}`);
    rmSync(next, { recursive: true, force: true });
    try {
      run([
        join(root, 'node_modules/typescript/bin/tsc'),
        '-p',
        'tsconfig.build.json',
        '--outDir',
        next,
      ]);
      run([join(root, 'scripts/copy-assets.mjs'), next]);
      run([join(root, 'scripts/bundle.mjs'), next]);
    } catch (error) {
      rmSync(next, { recursive: true, force: true });
      throw error;
    }
    writeFileSync(join(next, '.build-stamp'), stamp);
    writeFileSync(join(next, '.build-files'), files);
    const old = join(root, `dist.old-${process.pid}`);
    if (existsSync(dist)) renameSync(dist, old);
    renameSync(next, dist);
    rmSync(old, { recursive: true, force: true });
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

const args = process.argv.slice(2);
const buildOnly = args[0] === '--build-only';
const entry = args[0] === '--entry' ? args[1] : 'main.js';
const entryArgs = args[0] === '--entry' ? args.slice(2) : buildOnly ? [] : args;
const compiler = join(root, 'node_modules/typescript/bin/tsc');

const files = existsSync(join(root, 'src')) ? filesStamp() : undefined;
const stamp = files !== undefined && read(filesFile) !== files ? sourceStamp() : undefined;
if (stamp !== undefined && built() === stamp) rememberFiles(files);
else if (stamp !== undefined) {
  if (existsSync(compiler)) {
    try {
      await build(stamp, files);
    } catch (error) {
      // The compiler said what was wrong above; nothing half-built or locked is left.
      if (!(error instanceof BuildError)) throw error;
      process.stderr.write(`Could not compile the app: ${error.message}\n`);
      process.exit(1);
    }
  } else if (existsSync(join(dist, 'main.js'))) {
    // Only production dependencies here: run the build that is there, and say it is not src/'s.
    process.stderr.write(
      'dist/ was not built from the sources in src/, and the compiler (a dev dependency) is not installed here: running dist/ as it is. Run `npm ci && npm run build` to rebuild it.\n',
    );
  } else {
    process.stderr.write(
      'Nothing to run: dist/ is not built, and the compiler (a dev dependency) is not installed here. Run `npm ci && npm run build` once (or use the container image, which holds the build).\n',
    );
    process.exit(1);
  }
}
if (!buildOnly) {
  const file = join(dist, entry);
  if (!entry || !existsSync(file)) {
    process.stderr.write(`No such entry point in dist/: ${entry ?? '(none given)'}\n`);
    process.exit(2);
  }
  // The entry reads its own arguments from process.argv, as if it had been started directly.
  process.argv = [process.argv[0], file, ...entryArgs];
  await import(pathToFileURL(file).href);
}
