import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends the run with one plain line, `N passed, N failed, N skipped`, that CI reads whatever
 * the runner. Skipped suites name their reason in their titles (see helpers/databases.ts).
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    unhandledErrors: ReadonlyArray<unknown> = [],
  ): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const module of testModules) {
      // A test that never ran because its file's hook failed is a failure, not a skip: only
      // tests skipped by their declaration (skipIf, a dialect not configured) count as skipped.
      const moduleFailed = module.state() === 'failed';
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        const declaredSkip = test.options.mode === 'skip' || test.options.mode === 'todo';
        if (state === 'passed') counts.passed++;
        else if (state === 'failed' || (moduleFailed && !declaredSkip)) counts.failed++;
        else counts.skipped++;
      }
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0)
        counts.failed++;
    }
    // An error no test caught (an unhandled rejection) fails the run: it counts here too.
    counts.failed += unhandledErrors.length;
    process.stdout.write(
      `\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`,
    );
  }
}
