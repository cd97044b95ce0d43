import nodeModule from 'node:module';
import { type Application, startApplication } from './app.ts';
import { ConfigError, loadConfig, redactConfig, withDotEnv } from './config.ts';
import { isAppError } from './errors.ts';
import { createLogger } from './logger.ts';
import type { Sandbox } from './sandbox/sandbox.ts';

// Composition root: the only reader of process.env (and of .env in the working directory, under
// it). Starts the app (or the local sandbox around it) and stops cleanly on SIGINT/SIGTERM.

const env = withDotEnv(process.env);
if (process.argv.includes('--sandbox')) env.APP_MODE = 'sandbox';

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig(env);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(`${error.message}\n\nSee .env.example for every setting.`);
  process.exit(1);
}

const logger = createLogger(config.logLevel);
logger.debug({ config: redactConfig(config) }, 'configuration');

// Last resort. A promise nobody awaited that failed is a bug in one piece of work; the rest of the
// process is sound, so it keeps serving. An exception that unwound the stack may have left any
// state half-changed: log it and exit, and let the supervisor restart a clean process.
process.on('unhandledRejection', (reason) => {
  logger.error({ err: reason }, 'unhandled promise rejection; still serving');
});
process.on('uncaughtException', (error) => {
  logger.fatal({ err: error }, 'uncaught exception; exiting');
  process.exit(1);
});

let sandbox: Sandbox | undefined;
let app: Application;
try {
  if (config.mode === 'sandbox') {
    // Loaded only here: the sandbox (its Slack stand-in and the simulator) is no part of a
    // production start, and the compiled entry point leaves it out (scripts/bundle.mjs).
    const { startSandbox } = await import('./sandbox/sandbox.ts');
    sandbox = await startSandbox(config, logger);
    app = sandbox.app;
    process.stdout.write(`\nslack-approvals sandbox: open ${sandbox.url} and type /approve\n\n`);
  } else {
    app = await startApplication(config, { logger });
  }
} catch (error) {
  if ((error as { code?: string }).code === 'EADDRINUSE') {
    // The error names the port that was taken: Slack's (PORT) or the admin listener's.
    const taken = (error as { port?: number }).port ?? config.port;
    const name = config.admin && taken === config.admin.port ? 'ADMIN_PORT' : 'PORT';
    console.error(
      `Port ${taken} is already in use. Set ${name} to a free one, e.g. ${name}=${taken + 1} npm start`,
    );
  } else if (isAppError(error)) {
    // A known start-up failure: one line saying what and where, no stack, printed once (as the
    // configuration's and the port's are) rather than also as a log line beside it.
    console.error(error.message);
  } else {
    logger.fatal({ err: error }, 'could not start');
  }
  process.exit(1);
}

// Node writes its compile cache (scripts/start.mjs, NODE_COMPILE_CACHE) when the process exits;
// one killed with SIGKILL never does, and each restart after it would compile every module again.
// Written now, once everything a start loads is loaded (a no-op where the cache is off; absent
// before Node 22.10).
nodeModule.flushCompileCache?.();

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    // A second signal (an operator's second Ctrl-C) means now.
    if (stopping) {
      logger.warn({ signal }, 'stopping at once: a second signal');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'stopping');
    // However the stop goes, the process is gone shortly after its grace: a supervisor's SIGKILL
    // would otherwise come first, with nothing logged.
    setTimeout(() => {
      logger.error({ graceMs: config.shutdown.graceMs }, 'the stop outlasted its grace; exiting');
      process.exit(1);
    }, config.shutdown.graceMs + 2000).unref();
    void (sandbox ? sandbox.stop() : app.stop(config.shutdown)).then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'unclean stop');
        process.exit(1);
      },
    );
  });
}
