import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest, longest first (measured with `--reporter=json`: each file's end
 * minus its start, on this 2-core machine). vitest orders files by the durations it kept from
 * the last run, and without them (a fresh clone: CI) by size, largest first; several of the
 * longest are small, so they started last and the run ended minutes after everything else.
 */
const SLOWEST = [
  'test/container.test.ts',
  'test/main.test.ts',
  'test/slack/postgres-kills.test.ts',
  'test/start-script.test.ts',
  'test/store/migration-under-load.test.ts',
  'test/compiled-app.test.ts',
  'test/operator/accounts.test.ts',
  'test/operator/production-install.test.ts',
  'test/slack/delivery-faults.test.ts',
  'test/slack/outbox-model.test.ts',
  'test/store/sqlite-file.test.ts',
  'test/slack/escalation.test.ts',
  'test/slack/crash-recovery.test.ts',
  'test/rolling-deploy.test.ts',
  'test/start-hints.test.ts',
];

/** vitest's own order, with the slowest files moved to the front, so the two workers end together. */
export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const index = SLOWEST.findIndex((path) => file.moduleId.endsWith(`/${path}`));
      return index === -1 ? SLOWEST.length : index;
    };
    return sorted
      .map((file, at) => ({ file, at }))
      .sort((a, b) => rank(a.file) - rank(b.file) || a.at - b.at)
      .map(({ file }) => file);
  }
}
