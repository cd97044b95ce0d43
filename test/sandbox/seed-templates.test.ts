import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TemplateStore } from '../../src/approvals/request-templates.ts';
import { seedTemplates } from '../../src/sandbox/seed-templates.ts';
import { Workspace } from '../../src/sandbox/workspace.ts';
import { createTemplateStore } from '../../src/store/template-store.ts';
import { openTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';

// The sandbox's starting templates, against the SQLite file the sandbox itself uses.

const sqlite = TEST_DATABASES.find((d) => d.name === 'sqlite');
if (!sqlite) throw new Error('no SQLite test database');

describe('the sandbox’s starting templates', () => {
  let testDb: Awaited<ReturnType<typeof openTestDatabase>>;
  let store: TemplateStore;
  const workspace = new Workspace({
    people: [
      { login: 'maria.lopez@corp.example', name: 'Maria Lopez', locale: 'en-US' },
      { login: 'sam.taylor@corp.example', name: 'Sam Taylor', locale: 'en-US' },
      { login: 'li.wei@corp.example', name: 'Li Wei', locale: 'zh-CN' },
      { login: 'olivia.brown@corp.example', name: 'Olivia Brown', locale: 'en-US' },
      { login: 'chen.hao@corp.example', name: 'Chen Hao', locale: 'zh-CN' },
    ],
    channels: [{ name: 'general', appIsMember: true }],
  });
  const general = workspace.channelByName('general').id;

  beforeAll(async () => {
    testDb = await openTestDatabase(sqlite);
    store = createTemplateStore(testDb.handle.db, testDb.handle.dialect);
  });
  afterAll(async () => {
    await testDb.close();
  });

  it('seeds #general once: a start on a database that kept its templates adds nothing back', async () => {
    await seedTemplates(store, workspace);
    const seeded = await store.list(general);
    expect(seeded.map((t) => t.name)).toEqual([
      'Access request',
      'Equipment (two steps)',
      'Purchase',
      '请假',
    ]);
    expect(seeded.find((t) => t.name === 'Equipment (two steps)')?.laterSteps).toEqual([
      { kind: 'leader', level: 'second' },
    ]);
    const purchase = seeded.find((t) => t.name === 'Purchase');
    if (!purchase) throw new Error('no Purchase');
    await store.remove(
      purchase.id,
      workspace.userByLogin('sam.taylor@corp.example').id,
      new Date(),
    );

    await seedTemplates(store, workspace); // the next start, on the same database
    expect((await store.list(general)).map((t) => t.name)).toEqual([
      'Access request',
      'Equipment (two steps)',
      '请假',
    ]);
    expect(await store.history(general, 10)).toHaveLength(5);
  });
});
