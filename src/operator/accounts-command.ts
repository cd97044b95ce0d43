import {
  type AccountLinking,
  type AccountLinks,
  LINKING,
  type LinkedAccount,
  SERVICE_LOGIN,
  serviceNameOf,
} from '../approvals/account-links.ts';
// Logins compare one way everywhere (case-insensitively, as the service's lookups).
import { sameLogin } from '../approvals/person.ts';
import { csvField, tsvField, unneutralised } from './csv.ts';

export const ACCOUNTS_USAGE = `Usage:
  npm run accounts -- list                          every Slack person linked to a service login
  npm run accounts -- add <Slack member ID> <login> [name]
                                                    link one (replacing their earlier link;
                                                    refused when another member has the login)
  npm run accounts -- remove <Slack member ID>…     remove links (exits 1 when none was, because
                                                    an ID is unknown)
  npm run accounts -- export [file.csv]             every link as CSV, to the file or stdout
  npm run accounts -- import <file.csv>             link everyone in the CSV; every row is checked
                                                    first, and nothing is written when one is wrong
One login is one Slack person, and one person one login: a login linked to another member is
refused (remove that link first), and so is a CSV naming one login twice.
For people whose Slack e-mail is not their login in the approval service (e-mail matching stays
the rule for everyone else). A Slack member ID is in the person's Slack profile (⋯ → Copy member
ID), or in what \`/approve link\` tells them; it starts with U or W. A login is as the service
spells it (letters, digits and . - _ @). The name defaults to the login's first part in upper case,
as the service names people.
CSV: a header row, then one row per person; columns slack_user_id and login, and optionally name
and team_id (export also writes linked_at, which import ignores). Fields may be "quoted". Export
puts a ' before a field starting with = + - @, a tab or a carriage return, so a spreadsheet shows
it instead of running it as a formula; import takes that ' off again.
ACCOUNT_LINKING=off refuses add and import (links are not used then). It reads DATABASE_URL and
ACCOUNT_LINKING (from the environment or .env, else ./data/approvals.db), as the app does, and
never creates or migrates a database. In the image: the same command, or
node dist/operator/accounts-cli.js <arguments>.`;

/** Whether the arguments name work on the database (else the usage is the whole answer). */
export function isAccountsWork(args: readonly string[]): boolean {
  const [verb, ...rest] = args;
  if (!isVerb(verb)) return false;
  if (verb === 'add') return rest.length >= 2;
  if (verb === 'remove') return rest.length >= 1;
  if (verb === 'import') return rest.length === 1;
  if (verb === 'export') return rest.length <= 1;
  return rest.length === 0;
}

/** A Slack member ID: U… in a workspace, W… in an Enterprise Grid organization. */
const MEMBER_ID = /^[UW][A-Z0-9]{2,}$/;

export interface AccountsDeps {
  links: AccountLinks;
  linking: AccountLinking;
  now: () => Date;
  out: (line: string) => void;
  /** Reads an import file; writes an export file. */
  readFile: (path: string) => string;
  writeFile: (path: string, text: string) => void;
}

/**
 * The admin's side of account links: who is linked to which service login, and linking people in
 * bulk without anyone pasting a session cookie. Each link goes through AccountLinks.link, so an
 * approver nobody on Slack could be reached for is reachable from then on, as with
 * `/approve link`. Returns the process exit code.
 */
export async function accountsCommand(args: string[], deps: AccountsDeps): Promise<number> {
  const [verb, ...rest] = args;
  if ((verb === 'add' || verb === 'import') && !LINKING[deps.linking].byAdmins) {
    deps.out(
      'ACCOUNT_LINKING=off: links are not used, so none is added. Set ACCOUNT_LINKING=admin (or self) to link people.',
    );
    return 2;
  }
  if (isVerb(verb)) return RUN[verb](rest, deps);
  deps.out(ACCOUNTS_USAGE);
  return 2;
}

type Verb = 'list' | 'add' | 'remove' | 'export' | 'import';

function isVerb(word: string | undefined): word is Verb {
  return word !== undefined && Object.hasOwn(RUN, word);
}

/** Each verb's work, given the arguments after it; returns the exit code. */
const RUN: Record<Verb, (rest: string[], deps: AccountsDeps) => Promise<number>> = {
  list: listLinks,
  add: addLink,
  remove: removeLinks,
  export: exportLinks,
  import: importLinks,
};

async function listLinks(_rest: string[], deps: AccountsDeps): Promise<number> {
  const all = await deps.links.list();
  deps.out(`${all.length} linked account${all.length === 1 ? '' : 's'}`);
  // One line per link: a self-link's name is the person's Slack profile name, theirs to write.
  for (const a of all)
    deps.out(
      `${a.slackUserId}\t${tsvField(a.login)}\t${tsvField(a.name)}\t${a.linkedAt.toISOString()}`,
    );
  return 0;
}

async function addLink(rest: string[], deps: AccountsDeps): Promise<number> {
  const [slackUserId = '', login = '', ...name] = rest;
  const row = checkRow({ slackUserId, login, name: name.join(' '), teamId: '' });
  if (typeof row === 'string') {
    deps.out(row);
    return 2;
  }
  const before = await deps.links.get(row.slackUserId);
  const outcome = await deps.links.link({ ...row, linkedAt: deps.now() });
  if (!outcome.linked) {
    deps.out(takenMessage(row.login, outcome.takenBy));
    return 1;
  }
  deps.out(
    before
      ? `${row.slackUserId} is now linked to ${row.login} (was ${before.login})`
      : `${row.slackUserId} is now linked to ${row.login}`,
  );
  return 0;
}

async function removeLinks(rest: string[], deps: AccountsDeps): Promise<number> {
  let removed = 0;
  const unknown: string[] = [];
  for (const id of rest) {
    if (await deps.links.unlink(id)) removed++;
    else unknown.push(id);
  }
  deps.out(`${removed} link${removed === 1 ? '' : 's'} removed`);
  if (unknown.length > 0)
    deps.out(`Not linked, nothing to remove: ${unknown.join(', ')} (\`list\` shows the links)`);
  return removed === 0 && unknown.length > 0 ? 1 : 0;
}

async function exportLinks(rest: string[], deps: AccountsDeps): Promise<number> {
  const all = await deps.links.list();
  const text = toCsv(all);
  const [file] = rest;
  if (!file) {
    for (const line of text.trimEnd().split('\n')) deps.out(line);
    return 0;
  }
  try {
    deps.writeFile(file, text);
  } catch (error) {
    // An existing file is never overwritten: an export is often the backup of the links.
    deps.out(`Cannot write ${file}: ${(error as Error).message}`);
    return 2;
  }
  deps.out(`${all.length} link${all.length === 1 ? '' : 's'} written to ${file}`);
  return 0;
}

async function importLinks(rest: string[], deps: AccountsDeps): Promise<number> {
  const [file = ''] = rest;
  let text: string;
  try {
    text = deps.readFile(file);
  } catch (error) {
    deps.out(`Cannot read ${file}: ${(error as Error).message}`);
    return 2;
  }
  const parsed = parseImport(text);
  parsed.problems.push(...(await takenLogins(parsed.rows, deps.links)));
  if (parsed.problems.length > 0) {
    deps.out(`Nothing imported: ${file} has ${parsed.problems.length} problem(s):`);
    for (const problem of parsed.problems) deps.out(`  ${problem}`);
    return 1;
  }
  const counts = { added: 0, changed: 0, same: 0 };
  const said = (how: string) =>
    `Imported ${file}${how}: ${counts.added} added, ${counts.changed} changed, ${counts.same} already so`;
  for (const { line, ...row } of parsed.rows) {
    const before = await deps.links.get(row.slackUserId);
    if (before && sameLogin(before.login, row.login) && before.name === row.name) {
      counts.same++;
      continue;
    }
    const outcome = await deps.links.link({ ...row, linkedAt: deps.now() });
    // Checked above; only a link made meanwhile (another admin, /approve link) lands here.
    if (!outcome.linked) {
      deps.out(`line ${line}: ${takenMessage(row.login, outcome.takenBy)}`);
      deps.out(said(' in part'));
      return 1;
    }
    if (before) counts.changed++;
    else counts.added++;
  }
  deps.out(said(''));
  return 0;
}

type Row = Omit<LinkedAccount, 'linkedAt'>;

function takenMessage(login: string, holder: LinkedAccount): string {
  return `${login} is linked to ${holder.slackUserId} already, and one login is one Slack person: remove that link first (npm run accounts -- remove ${holder.slackUserId})`;
}

/** Rows whose login another member holds now (the file's own members aside), by line. */
async function takenLogins(
  rows: Array<Row & { line: number }>,
  links: AccountLinks,
): Promise<string[]> {
  const problems: string[] = [];
  for (const row of rows) {
    const holder = await links.findByLogin(row.login);
    if (holder && holder.slackUserId !== row.slackUserId)
      problems.push(`line ${row.line}: ${takenMessage(row.login, holder)}`);
  }
  return problems;
}

/** A row made usable (the name defaulted as the service names people), or what is wrong with it. */
function checkRow(raw: {
  slackUserId: string;
  login: string;
  name: string;
  teamId: string;
}): Row | string {
  if (!MEMBER_ID.test(raw.slackUserId))
    return `"${raw.slackUserId}" is not a Slack member ID (U… or W…, e.g. U0123ABCD)`;
  if (!SERVICE_LOGIN.test(raw.login))
    return `"${raw.login}" is not a login the approval service accepts (letters, digits and . - _ @)`;
  return {
    slackUserId: raw.slackUserId,
    login: raw.login,
    name: raw.name.trim() || serviceNameOf(raw.login),
    teamId: raw.teamId,
  };
}

const COLUMNS = ['slack_user_id', 'login', 'name', 'team_id', 'linked_at'] as const;

function toCsv(links: LinkedAccount[]): string {
  const lines = [COLUMNS.join(',')];
  for (const a of links)
    lines.push(
      [a.slackUserId, a.login, a.name, a.teamId, a.linkedAt.toISOString()].map(csvField).join(','),
    );
  return `${lines.join('\n')}\n`;
}

/** The rows of an import file, or every problem in it (by line), header included. */
export function parseImport(text: string): {
  rows: Array<Row & { line: number }>;
  problems: string[];
} {
  const records = parseCsv(text.replace(/^\uFEFF/, ''));
  const problems: string[] = [];
  const [header, ...body] = records;
  const names = (header?.fields ?? []).map((h) => h.trim().toLowerCase());
  const at = (column: string) => names.indexOf(column);
  if (at('slack_user_id') < 0 || at('login') < 0)
    return { rows: [], problems: ['line 1: the header must name slack_user_id and login'] };
  const rows: Array<Row & { line: number }> = [];
  const seen = new Map<string, number>();
  for (const { line, fields } of body) {
    if (fields.every((f) => f.trim() === '')) continue;
    const get = (column: string) =>
      at(column) >= 0 ? unneutralised((fields[at(column)] ?? '').trim()) : '';
    const row = checkRow({
      slackUserId: get('slack_user_id'),
      login: get('login'),
      name: get('name'),
      teamId: get('team_id'),
    });
    if (typeof row === 'string') {
      problems.push(`line ${line}: ${row}`);
      continue;
    }
    const earlier = seen.get(row.slackUserId);
    if (earlier !== undefined) {
      problems.push(`line ${line}: ${row.slackUserId} is on line ${earlier} too`);
      continue;
    }
    const sameLoginRow = rows.find((r) => sameLogin(r.login, row.login));
    if (sameLoginRow) {
      problems.push(
        `line ${line}: ${row.login} is on line ${sameLoginRow.line} too (for ${sameLoginRow.slackUserId}); one login is one Slack person`,
      );
      continue;
    }
    seen.set(row.slackUserId, line);
    rows.push({ ...row, line });
  }
  return { rows, problems };
}

/** RFC 4180 records, each with the line it starts on: "quoted" fields may hold , " and newlines. */
function parseCsv(text: string): Array<{ line: number; fields: string[] }> {
  const records: Array<{ line: number; fields: string[] }> = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let start = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else {
        if (c === '\n') line++;
        field += c;
      }
      continue;
    }
    if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      fields.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      fields.push(field);
      records.push({ line: start, fields });
      fields = [];
      field = '';
      line++;
      start = line;
    } else field += c;
  }
  if (field !== '' || fields.length > 0) {
    fields.push(field);
    records.push({ line: start, fields });
  }
  return records;
}
