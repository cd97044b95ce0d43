import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

// Running the project's commands as their own processes: their output collected, their exit
// awaited, and a copy of the project to run them in where they would change the checkout.

const root = new URL('../..', import.meta.url).pathname;

/** How a command ended: its exit code (0 on success) and what it printed. */
export interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** The outcome of a promisified execFile/exec, whether it exited 0 or not. */
export const outcomeOf = (run: Promise<{ stdout: string; stderr: string }>): Promise<Outcome> =>
  run.then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: Outcome) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );

export interface Running {
  child: ChildProcessWithoutNullStreams;
  /** Everything it printed so far, stdout and stderr together. */
  output(): string;
  exited: Promise<number | null>;
  /** SIGTERM, and its exit. */
  stop(): Promise<number | null>;
}

/** Starts a process whose output a test reads while it runs. */
export function started(
  command: string,
  args: readonly string[],
  options: { cwd?: string; env: Record<string, string> },
): Running {
  const child = spawn(command, args, { cwd: options.cwd ?? root, env: options.env });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** A copy of what builds and runs the app, at `dest`, sharing the checkout's node_modules. */
export function copyProject(dest: string): void {
  rmSync(dest, { recursive: true, force: true });
  mkdirSync(dest, { recursive: true });
  for (const entry of [
    'src',
    'scripts',
    'tsconfig.json',
    'tsconfig.build.json',
    'package.json',
    'package-lock.json',
  ])
    cpSync(join(root, entry), join(dest, entry), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(dest, 'node_modules'));
}
