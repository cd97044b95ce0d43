import fc from 'fast-check';
import { afterEach, beforeEach } from 'vitest';

// Every generated (fast-check) test can be replayed from the run's output. fast-check puts the
// seed, path and shrunk counterexample in the error it throws when a property fails, but a test
// can also fail without that error: vitest's timeout stops it mid-run, or a hook fails. So each
// test gets its seed from here, and a failed test that generated anything names that seed in a
// second error after its own, which the reporter prints with it.
//
//   FC_SEED=<seed> npx vitest run <file> -t '<test>'   replays a failure (the same cases, in order)
//   FC_NUM_RUNS=<n>                                     at least n cases per property (fast-check-runs.ts)
//
// See docs/developing.md ("Generated tests").

const FIXED_SEED = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
if (FIXED_SEED !== undefined && !Number.isInteger(FIXED_SEED))
  throw new Error(`FC_SEED must be an integer, not ${process.env.FC_SEED}`);

let seed = 0;
/** Whether the running test asked fast-check for anything (it reads the global seed then). */
let generated = false;

beforeEach(() => {
  seed = FIXED_SEED ?? (Math.random() * 2 ** 32) | 0;
  generated = false;
  // fast-check spreads the global parameters into each run's parameters, which reads this getter:
  // so it tells which tests generated something, and a test's own `seed` still wins.
  fc.configureGlobal({
    get seed() {
      generated = true;
      return seed;
    },
  });
});

afterEach((context) => {
  if (!generated || context.task.result?.state !== 'fail') return;
  const named = new Error(
    `fast-check seed of this test: ${seed} (unless the test set its own). ` +
      `Replay: FC_SEED=${seed} npx vitest run ${context.task.file.name} -t ${JSON.stringify(context.task.name)}`,
  );
  named.stack = `Error: ${named.message}`; // where it was thrown from says nothing
  throw named;
});
