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
) {
  /** The service's `check format` step: every named field, in order. */
  function checkFormat(
    values: Record<string, unknown>,
    mandatory: string[],
    optional: string[],
    pattern?: RegExp,
  ): Reply | undefined {
    for (const field of [...mandatory, ...optional]) {
      const value = values[field];
      if (value === undefined || value === null) {
        if (mandatory.includes(field)) return fail(`check format fail ${field} undef`);
        continue;
      }
      const text = String(value);
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

  function startApproval({ req, raw }: EndpointRequest): Reply {
    const body = parseRequestBody(req, raw);
    const refused =
      checkFormat(
        body,
        ['special_approver', 'title', 'apply_note'],
        ['user_id', 'route_user_id', 'route_node', 'participant'],
      ) ?? checkKey(req);
    if (refused) return refused;
    const columns = [
      ['user_id', body.user_id ?? 'sys@app', 100],
      ['special_approver', body.special_approver, 100],
      ['title', body.title, 200],
      ['apply_note', body.apply_note, 5000],
    ] as const;
    const stored: Record<string, string> = {};
    for (const [column, value, max] of columns) {
      const result = storeInColumn(String(value), column, max);
      if (!result.ok) return fail(result.error, `Err: ${result.error}`);
      stored[column] = result.value;
    }
    const djbh = state.newDjbh();
    state.approvals.set(djbh, {
      djbh,
      title: stored.title ?? '',
      note: stored.apply_note ?? '',
      requester: stored.user_id ?? 'sys@app',
      approver: stored.special_approver ?? '',
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

/** JSON when the caller says so; otherwise a form, read byte by byte as the service's stack does. */
function parseRequestBody(req: IncomingMessage, raw: string): Record<string, unknown> {
  const type = header(req, 'content-type') ?? '';
  if (type.startsWith('application/json')) {
    const parsed: unknown = JSON.parse(raw || '{}');
    if (!isObject(parsed)) throw new Error('JSON body is not an object');
    return parsed;
  }
  const form = new URLSearchParams(raw);
  return Object.fromEntries(
    [...form].map(([key, value]) => [key, Buffer.from(value, 'utf8').toString('latin1')]),
  );
}
