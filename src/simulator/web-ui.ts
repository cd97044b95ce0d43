import type { IncomingMessage, ServerResponse } from 'node:http';
import { header, Reply, send, sendHtml } from './http-replies.ts';
import type { SimulatorDecision, SimulatorState } from './simulator-state.ts';

/*
 * The service's web UI, as far as the app links into it (see docs/approval-service.md):
 * - GET  /                   the single page; its routes are fragments, as OpenC3's are:
 *                            `#/login?callback=<url>` signs in, `#/approval/<treeid>` lists the
 *                            signed-in person's approvals (any tree id: the list is the same)
 * - GET  /api/job/approval   that list: the person of the `sid` cookie, their last 100 approvals
 *                            as approver, newest first (`order by id desc`), each with `taskuuid`
 *                            = the number to3part returned
 * - POST /simulator/web/sign-in  {"login"}: sets the `sid` cookie (no password: a simulator)
 */

const OPINION: Record<SimulatorDecision, string> = {
  pending: '待办',
  approved: '同意',
  rejected: '不同意',
};
const LIST_SIZE = 100;

export function createWebUi(state: SimulatorState) {
  /** The person signed in with the request's `sid` cookie. */
  function signedIn(req: IncomingMessage) {
    const cookie = header(req, 'cookie') ?? '';
    const sid = /(?:^|;\s*)sid=([A-Za-z0-9]+)/.exec(cookie)?.[1];
    return sid ? state.personBySession(sid) : undefined;
  }

  /** Answers the web UI's requests; false for any other path. */
  return function answer(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    body: Record<string, unknown>,
  ): boolean {
    const method = req.method ?? 'GET';
    if (method === 'GET' && (path === '/' || path === '/index.html')) {
      sendHtml(res, 200, PAGE);
      return true;
    }
    if (method === 'GET' && path === '/api/job/approval') {
      const person = signedIn(req);
      if (!person) {
        send(res, new Reply(200, { stat: false, info: 'no login', code: 10000 }));
        return true;
      }
      const all = state.list();
      const rows = all
        .map((a, index) => ({ a, id: index + 1 }))
        .filter(({ a }) => a.approver === person.login)
        .reverse()
        .slice(0, LIST_SIZE)
        .map(({ a, id }) => ({
          id,
          taskuuid: a.djbh,
          name: a.title,
          submitter: a.requester,
          opinion: OPINION[a.decision],
          create_time: a.created.replace('T', ' ').slice(0, 19),
        }));
      send(res, new Reply(200, { stat: true, data: rows }));
      return true;
    }
    if (method === 'POST' && path === '/simulator/web/sign-in') {
      const person = state.person(String(body.login ?? ''));
      if (!person) {
        send(res, new Reply(404, { stat: false, info: 'no such person' }));
        return true;
      }
      res.setHeader('set-cookie', `sid=${person.token}; Path=/; HttpOnly; SameSite=Lax`);
      send(res, new Reply(200, { stat: true, data: { login: person.login } }));
      return true;
    }
    return false;
  };
}

// One page, no build step: it reads the fragment, as OpenC3's single-page UI does.
const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Approval service (simulator)</title>
<style>
body{font:14px system-ui,sans-serif;margin:2rem;color:#1d1c1d}
table{border-collapse:collapse;margin-top:1rem}td,th{border:1px solid #ddd;padding:.35rem .6rem;text-align:left}
th{background:#f4f4f4}code{font-size:13px}.muted{color:#666}
</style></head>
<body>
<h1>Approval service <span class="muted">(simulator)</span></h1>
<main id="view"></main>
<script>
const view = document.getElementById('view');
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;',"'":'&#39;'})[c]);
async function signIn(callback) {
  const people = (await (await fetch('/simulator/api/directory')).json()).people;
  view.innerHTML = '<p>Sign in as</p><select id="who">' +
    people.map((p) => '<option value="' + esc(p.login) + '">' + esc(p.name) + ' (' + esc(p.login) + ')</option>').join('') +
    '</select> <button id="go">Sign in</button>';
  document.getElementById('go').onclick = async () => {
    await fetch('/simulator/web/sign-in', { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ login: document.getElementById('who').value }) });
    location.hash = callback || '#/approval/0';
    route();
  };
}
async function list(tree) {
  const answer = await (await fetch('/api/job/approval')).json();
  if (!answer.stat) return signIn('#/approval/' + tree);
  view.innerHTML = '<h2>My approvals</h2>' + (answer.data.length === 0 ? '<p>No approvals.</p>' :
    '<table id="approvals"><thead><tr><th>Number</th><th>Title</th><th>From</th><th>Status</th><th>Created</th></tr></thead><tbody>' +
    answer.data.map((a) => '<tr data-taskuuid="' + esc(a.taskuuid) + '"><td><code>' + esc(a.taskuuid) + '</code></td><td>' + esc(a.name) +
      '</td><td>' + esc(a.submitter) + '</td><td>' + esc(a.opinion) + '</td><td>' + esc(a.create_time) + '</td></tr>').join('') +
    '</tbody></table>');
}
function route() {
  const hash = location.hash || '#/';
  const approval = /^#\\/approval\\/([^/?]*)/.exec(hash);
  if (approval) return list(approval[1]);
  if (hash.startsWith('#/login')) {
    const callback = new URLSearchParams(hash.split('?')[1] || '').get('callback');
    return signIn(callback);
  }
  view.innerHTML = '<p><a href="#/approval/0">My approvals</a> · <a href="#/login">Sign in</a></p>';
}
window.addEventListener('hashchange', route);
route();
</script>
</body></html>
`;
