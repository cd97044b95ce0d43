import type { IncomingMessage } from 'node:http';
import type { Endpoint } from '../approval-service/approval-service-error.ts';
import type { Faults } from './faults.ts';
import { header, isObject, Reply } from './http-replies.ts';
import { storeInColumn } from './mysql-literal.ts';
import type { SimulatorDecision, SimulatorState } from './simulator-state.ts';

// The four "to3part" endpoints, answering as the real service does: every application error is
// HTTP 200 with stat:false; the field format is checked before the credentials.

const FORMAT = /^[a-zA-Z0-9.\-_@]+$/;
const FORMAT_TEXT = '(?^:^[a-zA-Z0-9.\\-_@]+$)';
const ACTION_NAMES: Record<SimulatorDecision, string> = {
  pending: '待办',
  approved: '同意',
  rejected: '不同意',
};

const ok = (body: Record<string, unknown>) => new Reply(200, body);
const fail = (text: string, msg = text) =>
  new Reply(200, { stat: false, info: text, code: 1, msg });

export interface EndpointRequest {
  req: IncomingMessage;
  query: URLSearchParams;
  raw: string;
  faults: Faults;
}

/** Answers one request to an endpoint. Throws (→ HTTP 500) where the service's code would die. */
export function createTo3partEndpoints(
  state: SimulatorState,
  credentials: { appName: string; appKey: string },
  /** The note column's size: 20,000 on current installs, 5,000 on those that missed the update. */
  noteLimit = 20_000,
) {
  /** The service's `check format` step: every named field, in the route's order. */
  function checkFormat(
    values: Record<string, unknown>,
    mandatory: string[],
    optional: string[],
    pattern?: RegExp,
    order: string[] = [...mandatory, ...optional],
  ): Reply | undefined {
    for (const field of order) {
      const value = values[field];
      if (value === undefined || value === null) {
        if (mandatory.includes(field)) return fail(`check format fail ${field} undef`);
        continue;
      }
      const text = perlValue(value) ?? '';
      if (text.includes("'")) return fail(`check format fail ${field} format error`);
      if (pattern && !pattern.test(text))
        return fail(`check format fail ${field} format error ${FORMAT_TEXT}`);
    }
    return undefined;
  }

  function checkKey(req: IncomingMessage): Reply | undefined {
    if (
      header(req, 'appname') === credentials.appName &&
      header(req, 'appkey') === credentials.appKey
    )
      return undefined;
    return fail('key err');
  }

  function startApproval({ req, raw, faults }: EndpointRequest): Reply {
    if (faults.exception) throw new Error('Can\'t call method "execute" on an undefined value');
    const body = parseRequestBody(req, raw);
    // The route lists user_id first; route_user_id, route_node and participant are never checked.
    const refused =
      checkFormat(body, ['special_approver', 'title', 'apply_note'], [], undefined, [
        'user_id',
        'special_approver',
        'title',
        'apply_note',
      ]) ?? checkKey(req);
    if (refused) return refused;
    // One INSERT, columns in this order; a broken literal fails the statement before any column.
    const columns = [
      ['user', perlValue(body.special_approver), 100],
      ['submitter', perlValue(body.user_id) ?? 'sys@app', 100],
      ['cont', perlValue(body.apply_note), noteLimit],
      ['name', perlValue(body.title), 200],
    ] as const;
    const values = columns.map(([, value]) => value ?? '');
    const broken = values.find(breaksLiteral);
    if (broken !== undefined) return dbFailure(SYNTAX_ERROR);
    const stored: Record<string, string> = {};
    for (const [column, value, max] of columns) {
      const result = storeInColumn(value ?? '', column, max);
      if (!result.ok) return dbFailure(result.error);
      stored[column] = result.value;
    }
    const djbh = state.newDjbh();
    state.approvals.set(djbh, {
      djbh,
      title: stored.name ?? '',
      note: stored.cont ?? '',
      requester: stored.submitter ?? 'sys@app',
      approver: stored.user ?? '',
      decision: 'pending',
      created: state.now().toISOString(),
      decided: null,
    });
    return ok({ stat: true, code: 0, mesg: 'ok', data: { djbh, msg: 'ok' } });
  }

  function approvalStatus({ req, query, faults }: EndpointRequest): Reply {
    const djbh = query.get('djbh');
    const refused = checkFormat({ djbh }, ['djbh'], [], FORMAT) ?? checkKey(req);
    if (refused) return refused;
    const approval = state.approvals.get(djbh ?? '');
    // Unknown numbers are not an error; approvals never expire.
    if (!approval) return ok({ stat: true, code: 0, msg: 'ok', data: { isend: 0, data: null } });
    const entry: Record<string, string> = { actionname: ACTION_NAMES[approval.decision] };
    if (!faults.legacyStatus) entry.user_id = approval.approver;
    const isend = approval.decision === 'pending' ? 0 : 1;
    return ok({ stat: true, code: 0, msg: 'ok', data: { isend, data: [entry] } });
  }

  function department({ req, query }: EndpointRequest): Reply {
    const email = query.get('email');
    const refused = checkFormat({ email }, ['email'], [], FORMAT) ?? checkKey(req);
    if (refused) return refused;
    const address = email ?? '';
    // The lookup script refuses these before looking anyone up.
    if (address.length < 2 || /^[.\-_@]/.test(address)) return fail('get userinfo fail');
    const person = state.person(address);
    const one = person?.leader ?? '';
    const leaders = person?.leaders ?? { productLine: one, department: one, subDepartment: one };
    return ok({
      msg: 'ok',
      code: 0,
      stat: true,
      data: {
        sybDeptName: person?.productLine ?? '',
        oneDeptName: person?.department ?? '',
        twoDeptName: person?.subDepartment ?? '',
        sybLeaderId: leaders.productLine,
        oneLeaderId: leaders.department,
        twoLeaderId: leaders.subDepartment,
        // An unknown person is not an error: the service makes up defaults.
        accountName: person?.name ?? address.split('@')[0],
        accountId: person?.login ?? address,
        mobile: person?.mobile ?? '',
      },
    });
  }

  /** Needs no app credentials; answers the bare profile, or a failure without the envelope. */
  function userInfo({ req, faults }: EndpointRequest): Reply {
    if (faults.ssoError)
      return new Reply(200, { stat: false, info: 'sso code error: invalid code' });
    const person = state.personBySession(header(req, 'token') ?? '');
    if (!person) return new Reply(200, { stat: false, code: 10000 });
    return ok({
      admin: '0',
      showconnector: '1',
      company: 'corp',
      name: (person.login.split('@')[0] ?? '').toUpperCase(),
      email: person.login,
    });
  }

  const handlers: Record<Endpoint, (request: EndpointRequest) => Reply> = {
    'start-approval': startApproval,
    'approval-status': approvalStatus,
    department,
    'user-info': userInfo,
  };
  return (endpoint: Endpoint, request: EndpointRequest): Reply => handlers[endpoint](request);
}

/** Which endpoint a method and path name, as the service routes them. */
export function route(method: string, path: string): Endpoint | undefined {
  if (path === '/api/job/to3part/v1/approval') {
    if (method === 'POST') return 'start-approval';
    if (method === 'GET') return 'approval-status';
  }
  if (method === 'GET' && path === '/api/connector/to3part/v1/user/department') return 'department';
  if (method === 'GET' && path === '/api/connector/to3part/v1/user/userinfo') return 'user-info';
  return undefined;
}

/**
 * JSON when the caller says so, form fields otherwise, both as UTF-8. A JSON body the service's
 * strict parser refuses (malformed, or holding an escaped lone surrogate) is ignored as if no
 * field had been sent.
 */
function parseRequestBody(req: IncomingMessage, raw: string): Record<string, unknown> {
  const type = header(req, 'content-type') ?? '';
  if (!type.startsWith('application/json')) return Object.fromEntries(new URLSearchParams(raw));
  try {
    const parsed: unknown = JSON.parse(raw || '{}');
    if (!isObject(parsed) || hasLoneSurrogate(parsed)) return {};
    return parsed;
  } catch {
    return {};
  }
}

// With the u flag a surrogate pair is one code point, so this matches only lone halves.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

function hasLoneSurrogate(value: unknown): boolean {
  if (typeof value === 'string') return LONE_SURROGATE.test(value);
  if (Array.isArray(value)) return value.some(hasLoneSurrogate);
  if (isObject(value))
    return Object.entries(value).some(([k, v]) => LONE_SURROGATE.test(k) || hasLoneSurrogate(v));
  return false;
}

/** A JSON value as Perl turns it into text: true/false as 1/0, arrays and hashes as references. */
function perlValue(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === true) return '1';
  if (value === false) return '0';
  if (Array.isArray(value)) return 'ARRAY(0x55d5c1e3a8f0)';
  if (typeof value === 'object') return 'HASH(0x55d5c1e3a920)';
  return String(value);
}

/** An odd run of backslashes at the end escapes the closing quote of the SQL literal. */
function breaksLiteral(value: string): boolean {
  const run = /\\+$/.exec(value)?.[0].length ?? 0;
  return run % 2 === 1;
}

const SYNTAX_ERROR =
  "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '' at line 1";

/** The service's answer to a failed INSERT: the driver's text, with its place in the service. */
function dbFailure(error: string): Reply {
  const text = `DBD::mysql::st execute failed: ${error} at /data/Software/mydan/JOB/lib/MYDB.pm line 83.\n`;
  return fail(text, `Err: ${text}`);
}
