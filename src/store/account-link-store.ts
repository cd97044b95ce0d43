import type { Kysely } from 'kysely';
import type { AccountLinks, LinkedAccount, LinkOutcome } from '../approvals/account-links.ts';
import { sameLogin } from '../approvals/person.ts';
import { forgetApproverAccount, markApproverReachable } from './approval-repository.ts';
import type { DialectName } from './database.ts';
import { loginIs } from './login-match.ts';
import type { Database, LinkedAccountRow } from './schema.ts';

export function createAccountLinkStore(db: Kysely<Database>, dialect: DialectName): AccountLinks {
  return {
    async link(account) {
      const row: LinkedAccountRow = {
        slack_user_id: account.slackUserId,
        team_id: account.teamId,
        login: account.login,
        name: account.name,
        linked_at: account.linkedAt.getTime(),
      };
      return db.transaction().execute(async (trx): Promise<LinkOutcome> => {
        // One login, one person: checked in the transaction that links (SQLite runs one writer at
        // a time; on Postgres two links racing for one login is an operator's mistake twice over).
        const holders = await trx
          .selectFrom('linked_accounts')
          .selectAll()
          .where(() => loginIs('login', account.login))
          .where('slack_user_id', '<>', account.slackUserId)
          .execute();
        const holder = holders.find((r) => sameLogin(r.login, account.login));
        if (holder) return { linked: false, takenBy: toLinkedAccount(holder) };
        const previous = await trx
          .selectFrom('linked_accounts')
          .select('login')
          .where('slack_user_id', '=', account.slackUserId)
          .executeTakeFirst();
        // A relink to another login: what waits for the old one no longer names this account.
        if (previous && !sameLogin(previous.login, account.login))
          await forgetApproverAccount(trx, dialect, account.slackUserId, previous.login);
        await trx
          .insertInto('linked_accounts')
          .values(row)
          .onConflict((oc) =>
            oc.column('slack_user_id').doUpdateSet({
              team_id: row.team_id,
              login: row.login,
              name: row.name,
              linked_at: row.linked_at,
            }),
          )
          .execute();
        // With the link, the app can now reach an approver it found nobody on Slack for.
        await markApproverReachable(
          trx,
          dialect,
          account.login,
          account.linkedAt,
          account.slackUserId,
        );
        return { linked: true };
      });
    },
    async unlink(slackUserId) {
      return db.transaction().execute(async (trx) => {
        const removed = await trx
          .deleteFrom('linked_accounts')
          .where('slack_user_id', '=', slackUserId)
          .returning('login')
          .executeTakeFirst();
        if (!removed) return false;
        await forgetApproverAccount(trx, dialect, slackUserId, removed.login);
        return true;
      });
    },
    async get(slackUserId) {
      const row = await db
        .selectFrom('linked_accounts')
        .selectAll()
        .where('slack_user_id', '=', slackUserId)
        .executeTakeFirst();
      return row ? toLinkedAccount(row) : undefined;
    },
    async list() {
      const rows = await db
        .selectFrom('linked_accounts')
        .selectAll()
        .orderBy('slack_user_id')
        .execute();
      return rows.map(toLinkedAccount);
    },
    async findByLogin(login) {
      // lower() finds the candidates (indexed); person.ts decides. Postgres's lower() also folds
      // letters outside ASCII (U+212A KELVIN SIGN to `k`), which sameLogin holds to be other logins.
      const rows = await db
        .selectFrom('linked_accounts')
        .selectAll()
        .where(() => loginIs('login', login))
        .orderBy('linked_at', 'desc')
        .execute();
      const row = rows.find((r) => sameLogin(r.login, login));
      return row ? toLinkedAccount(row) : undefined;
    },
  };
}

function toLinkedAccount(row: LinkedAccountRow): LinkedAccount {
  return {
    slackUserId: row.slack_user_id,
    teamId: row.team_id,
    login: row.login,
    name: row.name,
    linkedAt: new Date(row.linked_at),
  };
}
