import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * How long one start of a process of the project (the app, the simulator, a command) may take
 * before a test gives up on it (the tests that start them allow 240 s). Alone one takes a second
 * or two; on two cores shared with another suite, or more, it takes many times that (a start
 * through tsx took 23 s at a load of 14).
 */
export const PROCESS_START_MS = 120_000;

/** How the process exited: the code, or the signal that ended it. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * The app as its own process, so a test can kill it with SIGKILL mid-flight: `src/main.ts` through
 * tsx by default, or the compiled entry (`dist/main.js`) as production runs it on plain node.
 */
export class AppProcess {
  private child: ChildProcess | undefined;
  readonly output: string[] = [];

  constructor(
    readonly env: Record<string, string>,
    private readonly entry: readonly string[] = ['--import', 'tsx', 'src/main.ts'],
  ) {}

  get port(): number {
    return Number(this.env.PORT);
  }

  async start(): Promise<void> {
    const child = spawn(process.execPath, [...this.entry], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    child.stdout?.on('data', (d: Buffer) => this.output.push(d.toString()));
    child.stderr?.on('data', (d: Buffer) => this.output.push(d.toString()));
    const deadline = Date.now() + PROCESS_START_MS;
    for (;;) {
      if (child.exitCode !== null)
        throw new Error(`app exited ${child.exitCode}:\n${this.output.join('')}`);
      const ok = await fetch(`http://127.0.0.1:${this.port}/healthz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) return;
      if (Date.now() > deadline)
        throw new Error(`app did not become healthy:\n${this.output.join('')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** kill -9, and wait until the process is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  }

  /** SIGTERM, as a supervisor stops it; resolves with how it exited (undefined if not running). */
  async stop(): Promise<Exit | undefined> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return undefined;
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    child.kill('SIGTERM');
    const [code, signal] = await exited;
    return { code, signal };
  }
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}
