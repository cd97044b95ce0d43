import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { accountsCommand } from '../../src/operator/accounts-command.ts';
import { createAccountLinkStore } from '../../src/store/account-link-store.ts';
import { openTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';

// What `npm run accounts` does to the links, run in-process on each database (accounts.test.ts
// runs the command as its own process beside the app).

for (const database of TEST_DATABASES) {
  describe.skipIf(database.skipReason)(
    `npm run accounts on ${database.name}${database.skipReason ? ` (skipped: ${database.skipReason})` : ''}`,
    () => {
      let testDb: Awaited<ReturnType<typeof openTestDatabase>>;
      let dir: string;
      beforeAll(async () => {
        testDb = await openTestDatabase(database);
      });
      afterAll(() => testDb?.close());
      beforeEach(async () => {
        await testDb.clear();
        await testDb.handle.db.deleteFrom('linked_accounts').execute();
        dir = mkdtempSync(join(tmpdir(), 'accounts-'));
      });
      afterEach(() => rmSync(dir, { recursive: true, force: true }));

      /** The command's exit code and what it printed. */
      async function accounts(...args: string[]) {
        const out: string[] = [];
        const code = await accountsCommand(args, {
          links: createAccountLinkStore(testDb.handle.db, testDb.handle.dialect),
          linking: 'admin',
          now: () => new Date(),
          out: (line) => out.push(line),
          readFile: (path) => readFileSync(path, 'utf8'),
          writeFile: (path, text) => writeFileSync(path, text, { flag: 'wx' }),
        });
        return { code, out: out.join('\n') };
      }

      it('links one login to one Slack person: add and import refuse a login another member holds', async () => {
        expect((await accounts('add', 'U0SAM', 'sam.taylor@corp.example')).code).toBe(0);
        // Before, this linked a second member to the login and both acted as it.
        expect(await accounts('add', 'U0ALEX', 'SAM.TAYLOR@corp.example')).toEqual({
          code: 1,
          out: 'SAM.TAYLOR@corp.example is linked to U0SAM already, and one login is one Slack person: remove that link first (npm run accounts -- remove U0SAM)',
        });
        // Relinking the same member to the same login stays allowed.
        expect((await accounts('add', 'U0SAM', 'sam.taylor@corp.example')).code).toBe(0);

        // Two members for one login in one file, and a login held already: refused whole.
        const twice = join(dir, 'twice.csv');
        writeFileSync(
          twice,
          'slack_user_id,login\nU0ONE,li.wei@corp.example\nU0TWO,Li.Wei@corp.example\nU0THREE,alex.kim@corp.example\nU0ALEX,sam.taylor@corp.example\n',
        );
        expect(await accounts('import', twice)).toEqual({
          code: 1,
          out: [
            `Nothing imported: ${twice} has 2 problem(s):`,
            '  line 3: Li.Wei@corp.example is on line 2 too (for U0ONE); one login is one Slack person',
            '  line 5: sam.taylor@corp.example is linked to U0SAM already, and one login is one Slack person: remove that link first (npm run accounts -- remove U0SAM)',
          ].join('\n'),
        });
        expect((await accounts('list')).out).toMatch(/^1 linked account\nU0SAM\t/);
      });

      it('lists one line per link whatever a Slack profile name holds', async () => {
        // A self-link takes the name from the person's Slack profile, which the person controls.
        await createAccountLinkStore(testDb.handle.db, testDb.handle.dialect).link({
          slackUserId: 'U0SAM',
          login: 'sam.taylor@corp.example',
          name: 'Sam\nU0BOSS\tboss@corp.example\t=1+1',
          teamId: 'T1',
          linkedAt: new Date('2026-11-28T00:00:00Z'),
        });
        const lines = (await accounts('list')).out.split('\n');
        expect(lines).toHaveLength(2);
        expect(lines[1]?.split('\t')).toEqual([
          'U0SAM',
          'sam.taylor@corp.example',
          'Sam U0BOSS boss@corp.example =1+1',
          '2026-11-28T00:00:00.000Z',
        ]);
      });

      it('exports names and logins a spreadsheet would run as formulas as text, and imports them back', async () => {
        await accounts('add', 'U0SAM', 'sam.taylor@corp.example', '=HYPERLINK("http://x.example")');
        await accounts('add', 'U0ALEX', '-alex@corp.example', '@SUM(1+1)');
        await accounts('add', 'U0LI', 'li.wei@corp.example', '+1');
        const out = join(dir, 'links.csv');
        expect((await accounts('export', out)).code).toBe(0);
        const csv = readFileSync(out, 'utf8');
        expect(csv).toContain(
          'U0SAM,sam.taylor@corp.example,"\'=HYPERLINK(""http://x.example"")",,',
        );
        expect(csv).toContain("U0ALEX,'-alex@corp.example,'@SUM(1+1),,");
        expect(csv).toContain("U0LI,li.wei@corp.example,'+1,,");
        for (const line of csv.split('\n').slice(1).filter(Boolean))
          for (const field of line.split(',')) expect(field).not.toMatch(/^"?[=+\-@\t\r]/);
        expect((await accounts('import', out)).out).toContain('0 added, 0 changed, 3 already so');
      });
    },
  );
}
