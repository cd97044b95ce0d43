import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSimulator, type Simulator } from '../../src/simulator/simulator.ts';

// One test per rule of docs/approval-service.md, over real HTTP.

const APP = { appname: 'test-app', appkey: 'test-key' };
const APPROVAL = '/api/job/to3part/v1/approval';
const DEPARTMENT = '/api/connector/to3part/v1/user/department';
const USERINFO = '/api/connector/to3part/v1/user/userinfo';

let sim: Simulator;

beforeAll(async () => {
  sim = await createSimulator({ port: 0, appName: APP.appname, appKey: APP.appkey });
});
afterAll(() => sim.close());
beforeEach(() => sim.clearFaults());

async function request(
  path: string,
  init: { method?: string; headers?: Record<string, string>; json?: unknown; body?: string } = {},
) {
  const headers: Record<string, string> = { ...init.headers };
  let body = init.body;
  if (init.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.json);
  }
  const response = await fetch(`${sim.url}${path}`, {
    method: init.method ?? 'GET',
    headers,
    body,
  });
  const text = await response.text();
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, type: response.headers.get('content-type'), text, json };
}

function djbhOf(res: { json?: Record<string, unknown> }): string {
  const data = res.json?.data as { djbh?: string } | undefined;
  if (!data?.djbh) throw new Error(`no djbh in ${JSON.stringify(res.json)}`);
  return data.djbh;
}

const validStart = {
  user_id: 'li.wei@corp.example',
  special_approver: 'maria.lopez@corp.example',
  title: 'New storage node',
  apply_note: 'For the Q3 expansion',
  route_user_id: '',
  route_node: '0',
  participant: '',
};

function start(json: unknown, headers: Record<string, string> = APP) {
  return request(APPROVAL, { method: 'POST', headers, json });
}

describe('transport', () => {
  it('answers application errors with HTTP 200 and stat:false, info, code 1 and msg', async () => {
    const res = await start(validStart, { appname: 'test-app', appkey: 'wrong' });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ stat: false, info: 'key err', code: 1, msg: 'key err' });
  });

  it('answers an unknown route with an HTML 404', async () => {
    const res = await request('/api/job/to3part/v2/approval');
    expect(res.status).toBe(404);
    expect(res.type).toContain('text/html');
  });

  it('answers an uncaught exception with HTTP 500 {stat:false, info, exception}', async () => {
    sim.setFaults('start-approval', { exception: true });
    const res = await start(validStart);
    expect(res.status).toBe(500);
    expect(res.json).toMatchObject({ stat: false });
    expect(typeof res.json?.info).toBe('string');
    expect(typeof res.json?.exception).toBe('string');
  });

  it.each([
    ['malformed', '{"title":'],
    [
      'holding an escaped lone surrogate',
      '{"special_approver":"m@x","title":"t","apply_note":"a \\udc00"}',
    ],
  ])('ignores a JSON body %s, as if no field had been sent', async (_what, body) => {
    const res = await request(APPROVAL, {
      method: 'POST',
      headers: { ...APP, 'content-type': 'application/json' },
      body,
    });
    expect(res.status).toBe(200);
    expect(res.json?.info).toBe('check format fail special_approver undef');
  });

  it('sends UTF-8 JSON without a charset in the header', async () => {
    const res = await request(`${DEPARTMENT}?email=li.wei@corp.example`, { headers: APP });
    expect(res.type).toBe('application/json');
    expect(res.json?.data).toMatchObject({ oneDeptName: 'Infrastructure 基础架构部' });
  });

  it('checks the format before the credentials', async () => {
    const res = await start({ ...validStart, title: undefined }, { appname: 'x', appkey: 'y' });
    expect(res.json?.info).toBe('check format fail title undef');
  });

  it('refuses a missing appname/appkey pair with key err', async () => {
    const res = await start(validStart, {});
    expect(res.json?.info).toBe('key err');
  });

  it('reads form-encoded bodies as UTF-8, so emoji fail there as database errors too', async () => {
    const form = (fields: Record<string, string>) =>
      request(APPROVAL, {
        method: 'POST',
        headers: { ...APP, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...validStart, ...fields }).toString(),
      });
    const djbh = djbhOf(await form({ title: '扩容 storage' }));
    expect(sim.approvals().find((a) => a.djbh === djbh)?.title).toBe('扩容 storage');
    expect((await form({ title: 'launch 🚀' })).json?.info).toContain(
      "Incorrect string value: '\\xF0\\x9F\\x9A\\x80' for column 'name'",
    );
  });

  it('serves an HTML 502, a dropped connection and a cut JSON body when told to', async () => {
    sim.setFaults('department', { html502: true });
    const html = await request(`${DEPARTMENT}?email=li.wei@corp.example`, { headers: APP });
    expect(html.status).toBe(502);
    expect(html.text).toContain('nginx');
    sim.setFaults('department', { malformedJson: true });
    const cut = await request(`${DEPARTMENT}?email=li.wei@corp.example`, { headers: APP });
    expect(cut.json).toBeUndefined();
    sim.setFaults('department', { outage: true });
    await expect(
      request(`${DEPARTMENT}?email=li.wei@corp.example`, { headers: APP }),
    ).rejects.toThrow();
  });
});

describe('start an approval', () => {
  it('answers success with mesg at the top and a 12-character djbh ending in a lower-case letter', async () => {
    const res = await start(validStart);
    expect(res.json).toMatchObject({ stat: true, code: 0, mesg: 'ok', data: { msg: 'ok' } });
    expect(djbhOf(res)).toMatch(/^[A-Za-z0-9]{11}[a-z]$/);
  });

  it.each(['special_approver', 'title', 'apply_note'])('requires %s', async (field) => {
    const res = await start({ ...validStart, [field]: undefined });
    expect(res.json).toMatchObject({
      stat: false,
      code: 1,
      info: `check format fail ${field} undef`,
    });
  });

  it('accepts empty strings for the mandatory fields', async () => {
    const res = await start({ ...validStart, title: '', apply_note: '', special_approver: '' });
    expect(res.json?.stat).toBe(true);
  });

  it('records sys@app as the submitter when user_id is missing', async () => {
    const res = await start({ ...validStart, user_id: undefined });
    const djbh = djbhOf(res);
    expect(sim.approvals().find((a) => a.djbh === djbh)?.requester).toBe('sys@app');
  });

  it('refuses an ASCII single quote in user_id, special_approver, title and apply_note', async () => {
    for (const field of ['title', 'apply_note', 'user_id', 'special_approver']) {
      const res = await start({ ...validStart, [field]: "it's" });
      expect(res.json?.info).toBe(`check format fail ${field} format error`);
    }
  });

  it('never checks route_user_id, route_node or participant, quotes included', async () => {
    const res = await start({
      ...validStart,
      route_user_id: "o'x",
      route_node: "'",
      participant: "'",
    });
    expect(res.json?.stat).toBe(true);
  });

  it('checks formats in the order user_id, special_approver, title, apply_note', async () => {
    expect((await start({ user_id: "o'neil", apply_note: 'n' })).json?.info).toBe(
      'check format fail user_id format error',
    );
    expect((await start({ apply_note: "it's" })).json?.info).toBe(
      'check format fail special_approver undef',
    );
    expect((await start({ special_approver: 'm', title: "it's" })).json?.info).toBe(
      'check format fail title format error',
    );
  });

  it('reports the first bad column in the INSERT order approver, submitter, note, title', async () => {
    const both = await start({ ...validStart, title: '🚀', apply_note: '🚀' });
    expect(both.json?.info).toContain("for column 'cont'");
    const approver = await start({ ...validStart, special_approver: '🚀', user_id: '🚀' });
    expect(approver.json?.info).toContain("for column 'user'");
    const submitter = await start({ ...validStart, user_id: 'x'.repeat(101), title: '🚀' });
    expect(submitter.json?.info).toContain("Data too long for column 'submitter'");
  });

  it('lets a SQL syntax error (an odd run of trailing backslashes) win over every other error', async () => {
    const res = await start({ ...validStart, special_approver: '🚀', title: 'C:\\\\\\' });
    expect(res.json?.info).toContain('You have an error in your SQL syntax');
    expect(res.json?.info).toMatch(/^DBD::mysql::st execute failed: .* line 83\.\n$/s);
  });

  it('stores an even run of trailing backslashes halved', async () => {
    const djbh = djbhOf(await start({ ...validStart, title: 'ab\\\\' }));
    expect(sim.approvals().find((a) => a.djbh === djbh)?.title).toBe('ab\\');
  });

  it('reports a value both too long and holding an emoji as too long', async () => {
    const res = await start({ ...validStart, title: `${'x'.repeat(200)}🚀` });
    expect(res.json?.info).toContain("Data too long for column 'name'");
  });

  it('stores JSON true/false as 1/0 and arrays and objects as Perl references', async () => {
    const djbh = djbhOf(await start({ ...validStart, title: true, apply_note: false }));
    const stored = sim.approvals().find((a) => a.djbh === djbh);
    expect([stored?.title, stored?.note]).toEqual(['1', '0']);
    const refs = djbhOf(await start({ ...validStart, title: ['a'], apply_note: { a: 1 } }));
    const kept = sim.approvals().find((a) => a.djbh === refs);
    expect(kept?.title).toMatch(/^ARRAY\(0x[0-9a-f]+\)$/);
    expect(kept?.note).toMatch(/^HASH\(0x[0-9a-f]+\)$/);
  });

  it('holds 5,000-character notes only, on an install that missed the schema update', async () => {
    const old = await createSimulator({
      port: 0,
      appName: APP.appname,
      appKey: APP.appkey,
      noteLimit: 5000,
    });
    try {
      const res = await fetch(`${old.url}${APPROVAL}`, {
        method: 'POST',
        headers: { ...APP, 'content-type': 'application/json' },
        body: JSON.stringify({ ...validStart, apply_note: 'x'.repeat(5001) }),
      });
      expect(((await res.json()) as { info: string }).info).toContain(
        "Data too long for column 'cont'",
      );
    } finally {
      await old.close();
    }
  });

  it('fails with a database error on a 4-byte character', async () => {
    const res = await start({ ...validStart, apply_note: 'launch 🚀' });
    expect(res.json?.stat).toBe(false);
    expect(res.json?.info).toMatch(
      /^DBD::mysql::st execute failed: Incorrect string value: '\\xF0\\x9F\\x9A\\x80' for column 'cont' at row 1 at .*MYDB\.pm line 83\.\n$/,
    );
    expect(res.json?.msg).toMatch(/^Err: /);
  });

  it('fails with a database error on a trailing backslash', async () => {
    const res = await start({ ...validStart, title: 'C:\\' });
    expect(res.json?.stat).toBe(false);
    expect(res.json?.info).toMatch(/^DBD::mysql/);
  });

  it('interprets backslash sequences instead of storing them as typed', async () => {
    const res = await start({ ...validStart, apply_note: 'C:\\new\\table \\\\ end' });
    const djbh = djbhOf(res);
    expect(sim.approvals().find((a) => a.djbh === djbh)?.note).toBe('C:\new\table \\ end');
  });

  it.each([
    ['title', 'name', 200],
    ['apply_note', 'cont', 20_000],
    ['special_approver', 'user', 100],
    ['user_id', 'submitter', 100],
  ])(
    'fails when %s is longer than %i characters, naming its column %s',
    async (field, column, max) => {
      const fits = await start({ ...validStart, [field]: '中'.repeat(max as number) });
      expect(fits.json?.stat).toBe(true);
      const over = await start({ ...validStart, [field]: '中'.repeat((max as number) + 1) });
      expect(over.json?.info).toContain(`Data too long for column '${column}'`);
    },
  );

  it('accepts and ignores route_user_id, route_node and participant', async () => {
    const res = await start({
      ...validStart,
      route_user_id: 'x',
      route_node: '7',
      participant: 'y',
    });
    expect(res.json?.stat).toBe(true);
  });

  it('takes "a,b" as one unknown approver login, not two approvers', async () => {
    const res = await start({ ...validStart, special_approver: 'a@x,b@x' });
    const djbh = djbhOf(res);
    const status = await request(`${APPROVAL}?djbh=${djbh}`, { headers: APP });
    expect(status.json?.data).toEqual({
      isend: 0,
      data: [{ actionname: '待办', user_id: 'a@x,b@x' }],
    });
  });
});

describe('query status', () => {
  it('refuses a djbh outside [a-zA-Z0-9.-_@]', async () => {
    const res = await request(`${APPROVAL}?djbh=${encodeURIComponent('abc def')}`, {
      headers: APP,
    });
    expect(res.json?.info).toBe('check format fail djbh format error (?^:^[a-zA-Z0-9.\\-_@]+$)');
  });

  it('answers an unknown djbh with success and data.data null', async () => {
    const res = await request(`${APPROVAL}?djbh=NoSuchNumbex`, { headers: APP });
    expect(res.json).toEqual({ stat: true, code: 0, msg: 'ok', data: { isend: 0, data: null } });
  });

  it('shows 待办 with isend 0 until decided, then the first decision with isend 1', async () => {
    const started = await start(validStart);
    const djbh = djbhOf(started);
    const pending = await request(`${APPROVAL}?djbh=${djbh}`, { headers: APP });
    expect(pending.json).toEqual({
      stat: true,
      code: 0,
      msg: 'ok',
      data: { isend: 0, data: [{ actionname: '待办', user_id: 'maria.lopez@corp.example' }] },
    });
    sim.decide(djbh, 'refuse');
    sim.decide(djbh, 'agree');
    const decided = await request(`${APPROVAL}?djbh=${djbh}`, { headers: APP });
    expect(decided.json?.data).toEqual({
      isend: 1,
      data: [{ actionname: '不同意', user_id: 'maria.lopez@corp.example' }],
    });
  });

  it('never expires an approval nobody decides', async () => {
    let clock = new Date('2026-01-01T00:00:00Z');
    const timeless = await createSimulator({ port: 0, now: () => clock });
    try {
      const started = await fetch(`${timeless.url}${APPROVAL}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          appname: 'slack-approvals',
          appkey: 'sandbox-app-key',
        },
        body: JSON.stringify(validStart),
      }).then((r) => r.json() as Promise<{ data: { djbh: string } }>);
      clock = new Date('2029-01-01T00:00:00Z');
      const status = await fetch(`${timeless.url}${APPROVAL}?djbh=${started.data.djbh}`, {
        headers: { appname: 'slack-approvals', appkey: 'sandbox-app-key' },
      }).then((r) => r.json() as Promise<{ data: unknown }>);
      expect(status.data).toEqual({
        isend: 0,
        data: [{ actionname: '待办', user_id: 'maria.lopez@corp.example' }],
      });
    } finally {
      await timeless.close();
    }
  });

  it('sends entries without user_id when it plays a version before September 2023', async () => {
    const started = await start(validStart);
    const djbh = djbhOf(started);
    sim.setFaults('approval-status', { legacyStatus: true });
    const res = await request(`${APPROVAL}?djbh=${djbh}`, { headers: APP });
    expect(res.json?.data).toEqual({ isend: 0, data: [{ actionname: '待办' }] });
  });
});

describe('department', () => {
  it('refuses an e-mail with + addressing by format', async () => {
    const res = await request(
      `${DEPARTMENT}?email=${encodeURIComponent('li.wei+x@corp.example')}`,
      { headers: APP },
    );
    expect(res.json?.info).toMatch(/^check format fail email format error/);
  });

  it.each(['.li@corp.example', '-li@corp.example', '_li@corp.example', '@corp.example', 'x'])(
    'answers get userinfo fail for %s, which the lookup script refuses',
    async (email) => {
      const res = await request(`${DEPARTMENT}?email=${encodeURIComponent(email)}`, {
        headers: APP,
      });
      expect(res.json).toMatchObject({ stat: false, code: 1, msg: 'get userinfo fail' });
    },
  );

  it('answers an unknown person with success and made-up defaults', async () => {
    const res = await request(`${DEPARTMENT}?email=nobody@corp.example`, { headers: APP });
    expect(res.json).toEqual({
      msg: 'ok',
      code: 0,
      stat: true,
      data: {
        sybDeptName: '',
        oneDeptName: '',
        twoDeptName: '',
        sybLeaderId: '',
        oneLeaderId: '',
        twoLeaderId: '',
        accountName: 'nobody',
        accountId: 'nobody@corp.example',
        mobile: '',
      },
    });
  });

  it('reports all nine fields as strings, with the one leader at every level', async () => {
    const res = await request(`${DEPARTMENT}?email=li.wei@corp.example`, { headers: APP });
    const data = res.json?.data as Record<string, unknown>;
    expect(Object.keys(data)).toHaveLength(9);
    for (const value of Object.values(data)) expect(typeof value).toBe('string');
    expect(data.sybLeaderId).toBe('maria.lopez@corp.example');
    expect(data.oneLeaderId).toBe('maria.lopez@corp.example');
    expect(data.twoLeaderId).toBe('maria.lopez@corp.example');
  });

  it('reports per-level leaders as an older or customised install fills them', async () => {
    const custom = await createSimulator({
      port: 0,
      directory: [
        {
          login: 'a@corp.example',
          name: 'A',
          mobile: 'wxid_a',
          productLine: 'PL',
          department: 'D',
          subDepartment: 'S',
          leader: '',
          leaders: {
            productLine: 'pl@corp.example',
            department: 'd@corp.example',
            subDepartment: 's@corp.example',
          },
          token: 'T'.repeat(64),
          locale: 'en-US',
          title: '',
        },
      ],
    });
    try {
      const res = await fetch(`${custom.url}${DEPARTMENT}?email=a@corp.example`, {
        headers: { appname: 'slack-approvals', appkey: 'sandbox-app-key' },
      }).then((r) => r.json() as Promise<{ data: Record<string, string> }>);
      expect(res.data).toMatchObject({
        sybLeaderId: 'pl@corp.example',
        oneLeaderId: 'd@corp.example',
        twoLeaderId: 's@corp.example',
        mobile: 'wxid_a',
      });
    } finally {
      await custom.close();
    }
  });

  it('needs the app credentials', async () => {
    const res = await request(`${DEPARTMENT}?email=li.wei@corp.example`);
    expect(res.json?.info).toBe('key err');
  });
});

describe('user info', () => {
  it('answers a known session token with the bare profile, without appkey', async () => {
    const person = sim.people.find((p) => p.login === 'li.wei@corp.example');
    const res = await request(USERINFO, { headers: { token: person?.token ?? '' } });
    expect(res.json).toEqual({
      admin: '0',
      showconnector: '1',
      company: 'corp',
      name: 'LI.WEI',
      email: 'li.wei@corp.example',
    });
    expect(res.json).not.toHaveProperty('stat');
  });

  it('still answers a just-logged-out token for about a minute, from its cache', async () => {
    let clock = new Date('2026-11-21T10:00:00Z');
    const cached = await createSimulator({ port: 0, now: () => clock });
    try {
      const old = cached.people.find((p) => p.login === 'sam.taylor@corp.example')?.token ?? '';
      const ask = (token: string) =>
        fetch(`${cached.url}${USERINFO}`, { headers: { token } }).then(
          (r) => r.json() as Promise<Record<string, unknown>>,
        );
      const out = await fetch(`${cached.url}/simulator/api/people/sam.taylor@corp.example/logout`, {
        method: 'POST',
      });
      expect(out.status).toBe(200);
      expect((await ask(old)).email).toBe('sam.taylor@corp.example');
      clock = new Date(clock.getTime() + 61_000);
      expect(await ask(old)).toEqual({ stat: false, code: 10000 });
      const fresh = cached.people.find((p) => p.login === 'sam.taylor@corp.example')?.token ?? '';
      expect(fresh).not.toBe(old);
      expect((await ask(fresh)).email).toBe('sam.taylor@corp.example');
    } finally {
      await cached.close();
    }
  });

  it('answers an unknown or missing token with {stat:false, code:10000}', async () => {
    expect((await request(USERINFO, { headers: { token: 'x'.repeat(64) } })).json).toEqual({
      stat: false,
      code: 10000,
    });
    expect((await request(USERINFO)).json).toEqual({ stat: false, code: 10000 });
  });
});

describe('admin routes', () => {
  it('lists the directory with session tokens', async () => {
    const res = await request('/simulator/api/directory');
    const people = res.json?.people as Array<{ login: string; token: string }>;
    expect(people.length).toBeGreaterThanOrEqual(10);
    expect(people[0]?.token).toMatch(/^[A-Za-z0-9]{64}$/);
  });

  it('lists approvals and takes the approver’s decision, first one winning', async () => {
    const started = await start(validStart);
    const djbh = djbhOf(started);
    const listed = await request('/simulator/api/approvals');
    expect(listed.json?.approvals).toContainEqual(
      expect.objectContaining({
        djbh,
        title: 'New storage node',
        requester: 'li.wei@corp.example',
        decision: 'pending',
      }),
    );
    const agree = await request(`/simulator/api/approvals/${djbh}/decision`, {
      method: 'POST',
      json: { decision: 'agree' },
    });
    expect(agree.json?.approval).toMatchObject({ decision: 'approved' });
    const refuse = await request(`/simulator/api/approvals/${djbh}/decision`, {
      method: 'POST',
      json: { decision: 'refuse' },
    });
    expect(refuse.json?.approval).toMatchObject({ decision: 'approved' });
    const bad = await request(`/simulator/api/approvals/${djbh}/decision`, {
      method: 'POST',
      json: { decision: 'maybe' },
    });
    expect(bad.status).toBe(400);
  });

  it('injects and clears faults', async () => {
    const set = await request('/simulator/api/faults', {
      method: 'POST',
      json: { endpoint: 'department', html502: true },
    });
    expect(set.json?.faults).toEqual({ department: { html502: true } });
    expect(
      (await request(`${DEPARTMENT}?email=li.wei@corp.example`, { headers: APP })).status,
    ).toBe(502);
    await request('/simulator/api/faults', { method: 'DELETE' });
    expect(
      (await request(`${DEPARTMENT}?email=li.wei@corp.example`, { headers: APP })).status,
    ).toBe(200);
  });
});

describe('the web UI’s list of the signed-in person’s approvals', () => {
  const LIST = '/api/job/approval';
  const signIn = async (login: string) => {
    const response = await fetch(`${sim.url}/simulator/web/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ login }),
    });
    return (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  };

  it('lists the approvals whose approver is signed in, newest first, at most 100, numbered by taskuuid', async () => {
    const approver = 'zhao.min@corp.example';
    const numbers: string[] = [];
    for (let i = 0; i < 102; i++)
      numbers.push(
        djbhOf(await start({ ...validStart, special_approver: approver, title: `T${i}` })),
      );
    await start({ ...validStart, special_approver: 'wang.fang@corp.example' });
    const cookie = await signIn(approver);
    expect(cookie).toMatch(/^sid=[A-Za-z0-9]{64}$/);
    const res = await request(LIST, { headers: { cookie } });
    const rows = res.json?.data as Array<{ taskuuid: string; name: string; opinion: string }>;
    expect(res.json?.stat).toBe(true);
    expect(rows).toHaveLength(100);
    expect(rows.map((r) => r.taskuuid)).toEqual(numbers.slice(2).reverse());
    expect(rows[0]).toMatchObject({ name: 'T101', opinion: '待办' });
  });

  it('answers no login without the session cookie, and serves the page the routes live on', async () => {
    expect((await request(LIST)).json).toMatchObject({ stat: false, code: 10000 });
    const page = await request('/');
    expect(page.type).toBe('text/html');
    expect(page.text).toContain('#\\/approval\\/');
  });
});
