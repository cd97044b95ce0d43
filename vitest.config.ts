import { defineConfig } from 'vitest/config';
import SlowFirstSequencer from './test/helpers/slow-first-sequencer.ts';

// Timeouts only end a test that is stuck: a passing test never waits for them, so they are
// generous. CI may run beside another suite on two cores, where a test takes several times what
// it takes alone; tests that start processes, a browser or a container set longer ones of their
// own. Waits inside tests are for conditions (helpers/harness.ts's waitFor, expect.poll), with
// bounds as generous, never for a fixed time.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    expect: { poll: { timeout: 30_000 } },
    // Tests start real servers and databases; two cores are shared between them.
    fileParallelism: true,
    maxWorkers: 2,
    // The longest files first, also in a fresh clone (helpers/slow-first-sequencer.ts).
    sequence: { sequencer: SlowFirstSequencer },
    // Each test's fast-check seed, named when it fails (helpers/fast-check-setup.ts).
    setupFiles: ['./test/helpers/fast-check-setup.ts'],
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
