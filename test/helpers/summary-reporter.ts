import type { Reporter, TestModule } from 'vitest/node';

/** One test as the summary sees it. */
export interface SummaryEntry {
  outcome: 'passed' | 'failed' | 'skipped';
  /** Titles of the suites around the test, outermost first. */
  suites: string[];
}

const SKIP_REASON = /\(skipped: (.+)\)$/;

/**
 * The lines that end the run: first `N passed, N failed, N skipped` (CI reads it, so its shape
 * never changes), then, for each reason suites gave for being skipped, how many tests it skipped
 * and the reason itself, which says how to turn them on.
 */
export function summaryLines(entries: ReadonlyArray<SummaryEntry>): string[] {
  const counts = { passed: 0, failed: 0, skipped: 0 };
  const reasons = new Map<string, number>();
  for (const entry of entries) {
    counts[entry.outcome]++;
    if (entry.outcome !== 'skipped') continue;
    const reason = entry.suites.map((title) => SKIP_REASON.exec(title)?.[1]).find(Boolean);
    if (reason) reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  }
  return [
    `${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`,
    ...[...reasons].map(([reason, n]) => `  ${n} skipped: ${reason}`),
  ];
}

/**
 * Ends the run with one plain line, `N passed, N failed, N skipped`, that CI reads whatever
 * the runner, followed by why tests were skipped. Skipped suites name their reason in their
 * titles, `(skipped: …)` (see helpers/databases.ts).
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    unhandledErrors: ReadonlyArray<unknown> = [],
  ): void {
    const entries: SummaryEntry[] = [];
    for (const module of testModules) {
      // A test that never ran because its file's hook failed is a failure, not a skip: only
      // tests skipped by their declaration (skipIf, a dialect not configured) count as skipped.
      const moduleFailed = module.state() === 'failed';
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        const declaredSkip = test.options.mode === 'skip' || test.options.mode === 'todo';
        const outcome =
          state === 'passed'
            ? 'passed'
            : state === 'failed' || (moduleFailed && !declaredSkip)
              ? 'failed'
              : 'skipped';
        const suites: string[] = [];
        for (let parent = test.parent; parent.type === 'suite'; parent = parent.parent)
          suites.unshift(parent.name);
        entries.push({ outcome, suites });
      }
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0)
        entries.push({ outcome: 'failed', suites: [] });
    }
    // An error no test caught (an unhandled rejection) fails the run: it counts here too.
    for (const _ of unhandledErrors) entries.push({ outcome: 'failed', suites: [] });
    process.stdout.write(`\n${summaryLines(entries).join('\n')}\n`);
  }
}
