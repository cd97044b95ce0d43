import { createServer, request as httpRequest } from 'node:http';
import { type AddressInfo, connect, createServer as createNetServer, type Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApprovalServiceClient } from '../../src/approval-service/approval-service-client.ts';
import { ApprovalServiceError } from '../../src/approval-service/approval-service-error.ts';
import { prepareApproval } from '../../src/approvals/approval-request.ts';
import { createObservedService, createServiceHealth } from '../../src/composition/service.ts';
import { loadConfig, withEnvFile } from '../../src/config.ts';
import type { Logger } from '../../src/logger.ts';
import type { Metrics } from '../../src/metrics.ts';
import { createSimulator, type Simulator } from '../../src/simulator/simulator.ts';
import { freePort } from '../helpers/app-process.ts';

const CREDENTIALS = { appName: 'client-test', appKey: 'k3y-that-must-stay-secret' };

let sim: Simulator;

beforeAll(async () => {
  sim = await createSimulator({ port: 0, ...CREDENTIALS });
});
afterAll(() => sim.close());
beforeEach(() => sim.clearFaults());

function client(overrides: Partial<Parameters<typeof createApprovalServiceClient>[0]> = {}) {
  return createApprovalServiceClient({
    baseUrl: sim.url,
    ...CREDENTIALS,
    timeoutMs: 2000,
    retryDelaysMs: [10, 10],
    ...overrides,
  });
}

async function failure(promise: Promise<unknown>): Promise<ApprovalServiceError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApprovalServiceError);
  const serviceError = error as ApprovalServiceError;
  expect(serviceError.message).not.toContain(CREDENTIALS.appKey);
  expect(JSON.stringify(serviceError)).not.toContain(CREDENTIALS.appKey);
  return serviceError;
}

const request = {
  requester: 'li.wei@corp.example',
  approver: 'maria.lopez@corp.example',
  title: 'New storage node',
  note: 'For the Q3 expansion',
};

describe('starting an approval', () => {
  it('returns the new approval number and sends all seven fields as JSON', async () => {
    const { djbh } = await client().startApproval(request);
    expect(djbh).toMatch(/^[A-Za-z0-9]{11}[a-z]$/);
    expect(sim.approvals().find((a) => a.djbh === djbh)).toMatchObject({
      title: request.title,
      note: request.note,
      requester: request.requester,
      approver: request.approver,
    });
  });

  it('stores CJK text and backslashes exactly as typed, trailing backslash included', async () => {
    const note = '扩容申请 C:\\new\\table and a trailing \\';
    const { djbh } = await client().startApproval({ ...request, title: '存储扩容 \\', note });
    const stored = sim.approvals().find((a) => a.djbh === djbh);
    expect(stored?.note).toBe(note);
    expect(stored?.title).toBe('存储扩容 \\');
  });

  it('gets quote, emoji, CJK and a trailing backslash accepted once the text is adapted', async () => {
    const prepared = prepareApproval(
      { title: "Li's 扩容 🚀", note: 'path C:\\data\\ 👍🏽', approverLogin: request.approver },
      request.requester,
    );
    if (!prepared.ok) throw new Error('draft refused');
    const { djbh } = await client().startApproval(prepared.input);
    expect(sim.approvals().find((a) => a.djbh === djbh)).toMatchObject({
      title: 'Li’s 扩容 :rocket:',
      note: 'path C:\\data\\ :+1::skin-tone-4:',
    });
  });

  it('reports a format failure as invalid-request naming the field', async () => {
    const error = await failure(client().startApproval({ ...request, title: "it's" }));
    expect(error.kind).toBe('invalid-request');
    expect(error.field).toBe('title');
    expect(error.message).toContain('POST /api/job/to3part/v1/approval');
  });

  it('takes a 20,000-character note, the size of the note column on current installs', async () => {
    const note = '长'.repeat(20_000);
    const { djbh } = await client().startApproval({ ...request, note });
    expect(sim.approvals().find((a) => a.djbh === djbh)?.note).toBe(note);
  });

  it.each([
    ['note', { note: 'x'.repeat(20_001) }, 'apply_note', 'too-long', 20_000],
    ['title', { title: 'x'.repeat(201) }, 'title', 'too-long', 200],
    ['approver', { approver: 'x'.repeat(101) }, 'special_approver', 'too-long', 100],
    ['requester', { requester: 'x'.repeat(101) }, 'user_id', 'too-long', 100],
    ['note', { note: 'launch 🚀' }, 'apply_note', 'unstorable', undefined],
    ['title', { title: 'launch 🚀' }, 'title', 'unstorable', undefined],
  ])(
    'maps a database refusal of the %s to its field (%o)',
    async (_what, change, field, problem, limit) => {
      const error = await failure(client().startApproval({ ...request, ...change }));
      expect(error).toMatchObject({ kind: 'invalid-request', field, problem });
      expect(error.limit).toBe(limit);
      expect(error.serviceMessage).toMatch(/^DBD::mysql/);
    },
  );

  it('names the 5,000-character limit of an install that missed the schema update', async () => {
    const old = await createSimulator({ port: 0, ...CREDENTIALS, noteLimit: 5000 });
    try {
      const error = await failure(
        client({ baseUrl: old.url, noteLimit: 5000 }).startApproval({
          ...request,
          note: 'x'.repeat(5001),
        }),
      );
      expect(error).toMatchObject({ field: 'apply_note', problem: 'too-long', limit: 5000 });
      expect(error.message).toContain(
        'apply_note is longer than the service accepts (5000 characters)',
      );
    } finally {
      await old.close();
    }
  });

  it('gets a note with half a surrogate pair accepted once adapted, instead of an empty request', async () => {
    const prepared = prepareApproval(
      { title: 'Broken \udc00 text', note: 'a \ud83d b', approverLogin: request.approver },
      request.requester,
    );
    if (!prepared.ok) throw new Error('draft refused');
    expect(prepared.changes).toContain('unsupported-character');
    const { djbh } = await client().startApproval(prepared.input);
    expect(sim.approvals().find((a) => a.djbh === djbh)).toMatchObject({
      title: 'Broken □ text',
      note: 'a □ b',
    });
  });

  it('reports wrong app credentials as credentials', async () => {
    const error = await failure(client({ appKey: 'wrong' }).startApproval(request));
    expect(error.kind).toBe('credentials');
    expect(error.message).toContain('key err');
  });

  it('does not retry a POST that timed out, and says it may have been created', async () => {
    sim.setFaults('start-approval', { latencyMs: 600 });
    const before = sim.requestCounts()['start-approval'];
    const error = await failure(client({ timeoutMs: 200 }).startApproval(request));
    expect(error.kind).toBe('unavailable');
    expect(error.maybeCreated).toBe(true);
    expect(error.message).toContain('no answer before the timeout');
    expect(sim.requestCounts()['start-approval'] - before).toBe(1);
  });

  it('does not retry a POST answered by an HTML 502', async () => {
    sim.setFaults('start-approval', { html502: true });
    const before = sim.requestCounts()['start-approval'];
    const error = await failure(client().startApproval(request));
    expect(error.kind).toBe('unavailable');
    expect(error.message).toContain('HTTP 502');
    expect(error.message).toContain('text/html');
    expect(sim.requestCounts()['start-approval'] - before).toBe(1);
  });

  it('retries a POST whose connection was refused, since nothing reached the service', async () => {
    // A port nobody listens on: the connection is refused before anything is sent.
    const port = await freePort();
    let attempts = 0;
    const error = await failure(
      client({
        baseUrl: `http://127.0.0.1:${port}`,
        sleep: async () => {
          attempts++;
        },
      }).startApproval(request),
    );
    expect(error.kind).toBe('unavailable');
    expect(error.maybeCreated).toBe(false);
    expect(attempts).toBe(2);
  });
});

describe('approval status', () => {
  it('reads a pending approval, then the decision once made', async () => {
    const c = client();
    const { djbh } = await c.startApproval(request);
    expect(await c.getStatus(djbh)).toEqual({
      ended: false,
      decision: 'pending',
      approver: 'maria.lopez@corp.example',
      unknown: false,
    });
    sim.decide(djbh, 'agree');
    expect(await c.getStatus(djbh)).toEqual({
      ended: true,
      decision: 'approved',
      approver: 'maria.lopez@corp.example',
      unknown: false,
    });
  });

  it('reads a rejection', async () => {
    const c = client();
    const { djbh } = await c.startApproval(request);
    sim.decide(djbh, 'refuse');
    expect(await c.getStatus(djbh)).toMatchObject({ ended: true, decision: 'rejected' });
  });

  it('marks an approval number the service does not know as unknown', async () => {
    expect(await client().getStatus('NoSuchNumbex')).toEqual({
      ended: false,
      decision: 'pending',
      unknown: true,
    });
  });

  it('copes with entries without user_id from older service versions', async () => {
    const c = client();
    const { djbh } = await c.startApproval(request);
    sim.setFaults('approval-status', { legacyStatus: true });
    expect(await c.getStatus(djbh)).toEqual({ ended: false, decision: 'pending', unknown: false });
  });

  it('retries with backoff while the service is down, then succeeds', async () => {
    const c = client();
    const { djbh } = await c.startApproval(request);
    sim.setFaults('approval-status', { outage: true });
    const slept: number[] = [];
    const retrying = client({
      retryDelaysMs: [30, 60],
      sleep: async (ms) => {
        slept.push(ms);
        if (slept.length === 2) sim.clearFaults();
      },
    });
    expect(await retrying.getStatus(djbh)).toMatchObject({ decision: 'pending' });
    expect(slept).toEqual([30, 60]);
  });

  it('gives up as unavailable after the last retry of a hung connection', async () => {
    sim.setFaults('approval-status', { latencyMs: 1000 });
    const before = sim.requestCounts()['approval-status'];
    const error = await failure(client({ timeoutMs: 100 }).getStatus('AAAAAAAAAAAa'));
    expect(error.kind).toBe('unavailable');
    expect(error.message).toContain(
      'GET /api/job/to3part/v1/approval: no answer before the timeout',
    );
    expect(sim.requestCounts()['approval-status'] - before).toBe(3);
  });

  it('times a status check out while its connection is still being made, not after undici’s own 10 s', async () => {
    // A service that takes the connection and never answers the TLS handshake.
    const silent = createNetServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      const started = performance.now();
      const error = await failure(
        client({
          baseUrl: `https://127.0.0.1:${port}`,
          timeoutMs: 300,
          retryDelaysMs: [],
        }).getStatus('AAAAAAAAAAAa'),
      );
      expect(error.message).toContain('no answer before the timeout');
      expect(performance.now() - started).toBeLessThan(5000);
    } finally {
      silent.close();
    }
  });

  it('reports a service that refuses connections as unavailable, naming the code and nothing secret', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const error = await failure(client({ baseUrl: closed }).getStatus('AAAAAAAAAAAa'));
    expect(error.kind).toBe('unavailable');
    expect(error.message).toContain('could not connect (ECONNREFUSED)');
    expect(String((error as { cause?: unknown }).cause)).not.toContain(CREDENTIALS.appKey);
  });

  it('reports a cut JSON body as unavailable and a wrong JSON shape as protocol', async () => {
    sim.setFaults('approval-status', { malformedJson: true });
    expect((await failure(client().getStatus('AAAAAAAAAAAa'))).kind).toBe('unavailable');
    const wrongShape = await failure(
      client({ baseUrl: `${sim.url}/simulator/api/approvals#` }).getStatus('AAAAAAAAAAAa'),
    );
    expect(wrongShape.kind).toBe('protocol');
  });

  it('drops a status answer that never ends instead of reading it until the process dies', async () => {
    // A body past what V8 can hold in one string (~512 MB) threw out of the reader's listener and
    // killed the process; 64 MB stands in for it here, as the bytes the client must not read.
    const megabyte = Buffer.alloc(1 << 20, 0x20);
    let written = 0;
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const pump = () => {
        while (written < 64 << 20 && !res.destroyed) {
          written += megabyte.length;
          if (!res.write(megabyte)) return;
        }
        if (!res.destroyed) res.end('{}');
      };
      res.on('drain', pump);
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const error = await failure(
        client({
          baseUrl: `http://127.0.0.1:${port}`,
          timeoutMs: 30_000,
          retryDelaysMs: [],
        }).getStatus('AAAAAAAAAAAa'),
      );
      expect(error.kind).toBe('unavailable');
      expect(error.message).toContain('an answer longer than');
      expect(written).toBeLessThan(16 << 20);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('checks status through the HTTP proxy the environment names, as it starts approvals', async () => {
    const { proxy, seen } = await forwardProxy();
    try {
      const { port } = proxy.address() as AddressInfo;
      // Set as an operator would; axios always read it, so starting went through the proxy.
      process.env.HTTP_PROXY = `http://127.0.0.1:${port}`;
      const proxied = client({ baseUrl: 'http://approvals.corp.invalid', retryDelaysMs: [] });
      const { djbh } = await proxied.startApproval(request);
      expect((await proxied.getStatus(djbh)).decision).toBe('pending');
      expect(seen).toEqual([
        'POST http://approvals.corp.invalid/api/job/to3part/v1/approval',
        `GET http://approvals.corp.invalid/api/job/to3part/v1/approval?djbh=${djbh}`,
      ]);
      // Both spellings set: every call takes the lower-case one, as Node's agents read it.
      seen.length = 0;
      const both = client({
        baseUrl: 'http://approvals.corp.invalid',
        retryDelaysMs: [],
        proxyEnv: { http_proxy: `http://127.0.0.1:${port}`, HTTP_PROXY: 'http://127.0.0.1:9' },
      });
      const again = await both.startApproval(request);
      expect((await both.getStatus(again.djbh)).decision).toBe('pending');
      expect(seen).toHaveLength(2);
    } finally {
      delete process.env.HTTP_PROXY;
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('takes the proxy the app was configured with, also from .env alone', async () => {
    const { proxy, seen } = await forwardProxy();
    try {
      const { port } = proxy.address() as AddressInfo;
      // As main.ts reads its settings: the environment with `.env` over it. The process's own
      // environment names no proxy (the client read only that one before).
      expect(process.env.HTTP_PROXY ?? process.env.http_proxy).toBeUndefined();
      const config = loadConfig(
        withEnvFile(
          {
            SLACK_BOT_TOKEN: 'xoxb-1-bot',
            SLACK_SIGNING_SECRET: 'signing-secret-value',
            APPROVAL_BASE_URL: 'http://approvals.corp.invalid',
            APPROVAL_APP_NAME: CREDENTIALS.appName,
            APPROVAL_APP_KEY: CREDENTIALS.appKey,
          },
          `HTTP_PROXY=http://127.0.0.1:${port}\nNO_PROXY=\n`,
        ),
      );
      const quiet = { debug() {}, info() {}, warn() {}, error() {} } as unknown as Logger;
      const service = createObservedService(
        config,
        undefined,
        { serviceCall() {} } as unknown as Metrics,
        createServiceHealth(quiet),
      );
      const { djbh } = await service.startApproval(request);
      expect((await service.getStatus(djbh)).decision).toBe('pending');
      expect(seen).toEqual([
        'POST http://approvals.corp.invalid/api/job/to3part/v1/approval',
        `GET http://approvals.corp.invalid/api/job/to3part/v1/approval?djbh=${djbh}`,
      ]);
    } finally {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('goes past the proxy for every NO_PROXY form the configuration takes, starting and checking alike', async () => {
    const { proxy, seen } = await forwardProxy();
    // The simulator on the IPv6 loopback as well, for `::1` entries.
    const simPort = Number(new URL(sim.url).port);
    const sockets = new Set<Socket>();
    const bridge = createNetServer((socket) => {
      const onward = connect(simPort, '127.0.0.1');
      sockets.add(socket).add(onward);
      socket.pipe(onward).pipe(socket);
      onward.on('error', () => socket.destroy());
    });
    await new Promise<void>((resolve) => bridge.listen(0, '::1', resolve));
    const v6 = `http://[::1]:${(bridge.address() as AddressInfo).port}`;
    const quiet = { debug() {}, info() {}, warn() {}, error() {} } as unknown as Logger;
    const serviceFor = (baseUrl: string, noProxy: string) =>
      createObservedService(
        loadConfig({
          SLACK_BOT_TOKEN: 'xoxb-1-bot',
          SLACK_SIGNING_SECRET: 'signing-secret-value',
          APPROVAL_BASE_URL: baseUrl,
          APPROVAL_APP_NAME: CREDENTIALS.appName,
          APPROVAL_APP_KEY: CREDENTIALS.appKey,
          HTTP_PROXY: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
          NO_PROXY: noProxy,
        }),
        undefined,
        { serviceCall() {} } as unknown as Metrics,
        createServiceHealth(quiet),
      );
    try {
      for (const [baseUrl, noProxy] of [
        [sim.url, 'localhost,127.0.0.1,'],
        [sim.url, 'intranet.corp.example,,127.0.0.1'],
        [sim.url, 'intranet.corp.example,*'],
        [v6, 'localhost,127.0.0.1,::1,.svc,.cluster.local'],
      ] as const) {
        const service = serviceFor(baseUrl, noProxy);
        const { djbh } = await service.startApproval(request);
        expect((await service.getStatus(djbh)).decision, noProxy).toBe('pending');
        expect(seen, `${baseUrl} with NO_PROXY=${noProxy}`).toEqual([]);
      }
      // Why `[::1]` is refused: Node's agents (the start) read it as no host of theirs, undici
      // (the status check) as ::1, so one call would go through the proxy and the other not.
      const bracketed = client({
        baseUrl: v6,
        proxyEnv: {
          HTTP_PROXY: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
          NO_PROXY: '[::1]',
        },
      });
      const { djbh } = await bracketed.startApproval(request);
      await bracketed.getStatus(djbh);
      expect(seen).toEqual([`POST ${v6}/api/job/to3part/v1/approval`]);
    } finally {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => bridge.close(resolve));
    }
  });

  it('never carries the app key or a session token on when the service or a proxy echoes them', async () => {
    // A service (or a proxy in front of it) that quotes what it was sent in its error: the
    // message, the service's words kept on the error, and the body's excerpt must not hold it.
    const token = 'S3ssion'.repeat(9).padEnd(64, 'q');
    const answers: Array<{ status: number; type: string; body: (echo: string) => string }> = [
      {
        status: 200,
        type: 'application/json',
        body: (echo) => JSON.stringify({ stat: false, code: 3, msg: `unknown app ${echo}` }),
      },
      {
        status: 500,
        type: 'application/json',
        body: (echo) => JSON.stringify({ stat: false, code: 5, info: `failed for ${echo}` }),
      },
      { status: 502, type: 'text/html', body: (echo) => `bad header: ${echo}` },
    ];
    for (const answer of answers) {
      const echoing = createServer((req, res) => {
        const echo = `appkey=${req.headers.appkey ?? ''} token=${req.headers.token ?? ''}`;
        res.writeHead(answer.status, { 'content-type': answer.type }).end(answer.body(echo));
      });
      await new Promise<void>((resolve) => echoing.listen(0, '127.0.0.1', resolve));
      const baseUrl = `http://127.0.0.1:${(echoing.address() as AddressInfo).port}`;
      try {
        const echoed = client({ baseUrl, retryDelaysMs: [] });
        await failure(echoed.getStatus('AAAAAAAAAAAa'));
        await failure(echoed.startApproval(request));
        const profile = await failure(echoed.getProfile(token));
        expect(profile.message).not.toContain(token);
        expect(JSON.stringify(profile)).not.toContain(token);
      } finally {
        await new Promise((resolve) => echoing.close(resolve));
      }
    }
  });

  it('reads a good answer as it came, even when a short app key is one of its words', async () => {
    const answering = createServer((_req, res) => {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ stat: true, code: 0, mesg: 'ok', data: { isend: 0, data: [] } }));
    });
    await new Promise<void>((resolve) => answering.listen(0, '127.0.0.1', resolve));
    const baseUrl = `http://127.0.0.1:${(answering.address() as AddressInfo).port}`;
    try {
      for (const appKey of ['true', 'ok', 'data'])
        expect((await client({ baseUrl, appKey }).getStatus('AAAAAAAAAAAa')).decision).toBe(
          'pending',
        );
    } finally {
      await new Promise((resolve) => answering.close(resolve));
    }
  });

  it('reports a djbh the service cannot read as invalid-request', async () => {
    const error = await failure(client().getStatus('not valid!'));
    expect(error.kind).toBe('invalid-request');
    expect(error.field).toBe('djbh');
  });

  it('says clearly when the base URL points at a federation proxy', async () => {
    sim.setFaults('all', { federationProxy: true });
    const error = await failure(client().getStatus('AAAAAAAAAAAa'));
    expect(error.kind).toBe('protocol');
    expect(error.message).toContain('federation proxy');
    const refused = await failure(client({ appKey: 'wrong' }).getDepartment('li.wei@corp.example'));
    expect(refused.message).toContain('federation proxy');
  });
});

describe('department', () => {
  it('reads the department chain and leaders', async () => {
    expect(await client().getDepartment('li.wei@corp.example')).toEqual({
      login: 'li.wei@corp.example',
      name: 'Li Wei',
      mobile: '13800000004',
      productLine: 'Cloud Platform 云平台',
      department: 'Infrastructure 基础架构部',
      subDepartment: 'Storage 存储组',
      leaders: {
        subDepartment: 'maria.lopez@corp.example',
        department: 'maria.lopez@corp.example',
        productLine: 'maria.lopez@corp.example',
      },
    });
  });

  it('reads the made-up defaults for an unknown person without error', async () => {
    expect(await client().getDepartment('nobody@corp.example')).toMatchObject({
      login: 'nobody@corp.example',
      name: 'nobody',
      department: '',
      leaders: { subDepartment: '', department: '', productLine: '' },
    });
  });

  it('reports get userinfo fail as rejected with the service’s words', async () => {
    const error = await failure(client().getDepartment('_x@corp.example'));
    expect(error.kind).toBe('rejected');
    expect(error.serviceMessage).toBe('get userinfo fail');
  });
});

describe('profile', () => {
  it('reads the profile behind a session token, sending the token and no app credentials', async () => {
    const token = sim.people.find((p) => p.login === 'maria.lopez@corp.example')?.token ?? '';
    expect(await client().getProfile(token)).toEqual({
      login: 'maria.lopez@corp.example',
      name: 'MARIA.LOPEZ',
      company: 'corp',
      admin: false,
    });
    const sent = sim
      .received()
      .filter((r) => r.endpoint === 'user-info')
      .at(-1);
    expect(sent?.headers).toContain('token');
    expect(sent?.headers).not.toContain('appkey');
    expect(sent?.headers).not.toContain('appname');
  });

  it('sends the app credentials on the enveloped endpoints', async () => {
    await client().getDepartment('li.wei@corp.example');
    const sent = sim
      .received()
      .filter((r) => r.endpoint === 'department')
      .at(-1);
    expect(sent?.headers).toEqual(expect.arrayContaining(['appname', 'appkey']));
    expect(sent?.query).toEqual({ email: 'li.wei@corp.example' });
  });

  it('reports an unknown token as rejected without echoing the token', async () => {
    const token = 'T0ken'.repeat(12).padEnd(64, 'z');
    const error = await failure(client().getProfile(token));
    expect(error.kind).toBe('rejected');
    expect(error.serviceCode).toBe(10000);
    expect(error.message).toContain('not logged in');
    expect(error.message).not.toContain(token);
    expect(String(error.cause ?? '')).not.toContain(token);
  });
});

/**
 * A forward proxy, the only way to the service in the proxy tests (its name resolves nowhere
 * else): it passes each request on to the simulator, and notes what it was asked.
 */
async function forwardProxy() {
  const seen: string[] = [];
  const proxy = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const target = new URL(req.url ?? '/');
    const onward = httpRequest(
      `${sim.url}${target.pathname}${target.search}`,
      { method: req.method, headers: { ...req.headers, host: new URL(sim.url).host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(onward);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return { proxy, seen };
}
