// `npm start`: runs the compiled app (dist/main.js), building it first only when its sources
// changed since the last build. `npm run build` (`--build-only`) builds without running.
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
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const dist = join(root, 'dist');
const stampFile = join(dist, '.build-stamp');
const lock = join(root, '.build-lock');
const INPUTS = [
  'src',
  'tsconfig.json',
  'tsconfig.build.json',
  'scripts/copy-assets.mjs',
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

const built = () => (existsSync(stampFile) ? readFileSync(stampFile, 'utf8') : undefined);

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** Takes the build lock (a folder holding the builder's pid), waiting while a live start holds it. */
async function takeLock() {
  for (const deadline = Date.now() + 300_000; Date.now() < deadline; ) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      return;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      const holder = Number(readFileSync(join(lock, 'pid'), { encoding: 'utf8', flag: 'a+' }));
      // A start killed while building left its lock: nobody holds it.
      if (holder && !alive(holder)) rmSync(lock, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  throw new Error(`another start has been building for 5 minutes (${lock}); remove it if stale`);
}

function run(args) {
  const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

async function build(stamp) {
  await takeLock();
  try {
    if (built() === stamp) return; // another start built it while this one waited
    process.stderr.write('Compiling the app (sources changed since the last build)…\n');
    const next = join(root, `dist.build-${process.pid}`);
    rmSync(next, { recursive: true, force: true });
    run([
      join(root, 'node_modules/typescript/bin/tsc'),
      '-p',
      'tsconfig.build.json',
      '--outDir',
      next,
    ]);
    run([join(root, 'scripts/copy-assets.mjs'), next]);
    writeFileSync(join(next, '.build-stamp'), stamp);
    const old = join(root, `dist.old-${process.pid}`);
    if (existsSync(dist)) renameSync(dist, old);
    renameSync(next, dist);
    rmSync(old, { recursive: true, force: true });
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

const stamp = sourceStamp();
if (built() !== stamp) await build(stamp);
if (!process.argv.includes('--build-only')) await import(pathToFileURL(join(dist, 'main.js')).href);
