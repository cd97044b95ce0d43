import { collectValues, el, mrkdwn, renderBlocks, useEmoji } from '/sandbox/block-kit.js';

// The sandbox page: plays the Slack client for one person at a time. Everything it does goes to
// the sandbox server, which turns it into what Slack would send the app.

const state = {
  me: '',
  data: null,
  channel: '',
  tab: 'messages',
  thread: null,
  /** The message whose "⋯" menu is open (`channel/ts`); kept here so a redraw keeps it open. */
  menuFor: null,
  errors: {},
  approvals: [],
  /** Whether the sandbox (Slack and the app) answers; false from a failed call until it is back. */
  online: true,
  /** Messages only this page shows: Slackbot saying a command failed while the app was down. */
  local: [],
  /** Modals closed while the app was down: Slack closes them at once, whatever the app does. */
  closedLocally: new Set(),
  /** What the page showed, by name, to find again after a restart gives everything new ids. */
  meEmail: '',
  channelName: '',
};
const $ = (id) => document.getElementById(id);

/** Thrown when the sandbox does not answer (stopped, restarting): the page goes offline. */
class Offline extends Error {}

async function api(path, body) {
  let response;
  try {
    response = await fetch(
      path,
      body === undefined
        ? {}
        : {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(body),
          },
    );
  } catch {
    goOffline();
    throw new Offline('the sandbox did not answer');
  }
  // An answer, even an error, means the sandbox is up: only a failed connection is offline.
  return response.json();
}

/** What Slack's client says when it could not get a command to the app (Slackbot, only to you). */
const dispatchFailed = (command) => `${command} failed with the error "dispatch_failed"`;

/** What Slack shows in a modal whose submission the app did not answer. */
const MODAL_TROUBLE = 'We had some trouble connecting. Try again?';

const names = () => new Map(state.data.people.map((p) => [p.id, p.name]));
const ctx = (extra = {}) => ({
  name: (id) => names().get(id) ?? id,
  channelName: (id) => state.data.channels.find((c) => c.id === id)?.name ?? id,
  people: state.data.people,
  channels: state.data.channels.filter((c) => c.kind !== 'im'),
  // A button outside any message (App Home): no channel, as in Slack.
  onAction: (element) =>
    api('/sandbox/api/action', {
      user: state.me,
      actionId: element.action_id,
      value: element.value ?? '',
    }),
  ...extra,
});

const time = (ts) =>
  new Date(Number(ts) * 1000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
const initials = (name) =>
  name
    .split(/\s+/)
    .map((w) => w[0])
    .join('')
    .slice(0, 2)
    .toUpperCase();

function messageNode(m, { inThread = false } = {}) {
  if (m.subtype === 'channel_join')
    return el(
      'article',
      { class: 'message notice', 'data-ts': m.ts },
      el('div', {}),
      el('div', { class: 'notice-text' }, mrkdwn(m.text, ctx())),
    );
  const isBot = m.user === state.data.botUserId;
  const isSlackbot = m.user === state.data.slackbotId;
  const name = isBot ? 'Approvals' : (names().get(m.user) ?? m.user);
  const replies = inThread
    ? []
    : state.data.messages.filter((r) => r.threadTs === m.ts && r.channel === m.channel);
  // A button in a message goes to the app with the message's channel and ts, as Slack sends it:
  // without them the app has no response_url, and its answer (an ephemeral reply) is lost.
  const onAction = (element) =>
    api('/sandbox/api/action', {
      user: state.me,
      actionId: element.action_id,
      value: element.value ?? '',
      channel: m.channel,
      ts: m.ts,
    });
  const content = m.blocks?.length
    ? renderBlocks(m.blocks, ctx({ onAction }))
    : [el('div', { class: 'bk-section' }, el('span', {}, mrkdwn(m.text, ctx())))];
  return el(
    'article',
    { class: `message${m.ephemeral ? ' ephemeral' : ''}`, 'data-ts': m.ts },
    el(
      'div',
      {
        class: `avatar${isBot ? ' bot' : ''}${isSlackbot ? ' slackbot' : ''}`,
        style:
          isBot || isSlackbot
            ? null
            : `background:hsl(${[...name].reduce((a, c) => a + c.charCodeAt(0), 0) % 360} 45% 55%)`,
      },
      isBot ? '✓' : isSlackbot ? '✱' : initials(name),
    ),
    el(
      'div',
      {},
      el(
        'div',
        { class: 'meta' },
        el('span', { class: 'name' }, name),
        isBot ? el('span', { class: 'app-tag' }, 'APP') : null,
        el('span', { class: 'time' }, time(m.ts)),
        m.edited ? el('span', { class: 'edited' }, '(edited)') : null,
      ),
      content,
      m.ephemeral ? null : messageMenu(m),
      m.ephemeral ? el('div', { class: 'ephemeral-note' }, 'Only visible to you') : null,
      replies.length
        ? el(
            'button',
            { class: 'replies-link', onclick: () => openThread(m) },
            `${replies.length} ${replies.length === 1 ? 'reply' : 'replies'}`,
          )
        : null,
    ),
  );
}

/** A message's "⋯" menu: the app's message shortcut, as Slack lists it there. */
function messageMenu(m) {
  const key = `${m.channel}/${m.ts}`;
  const menu = el(
    'div',
    { class: 'menu', role: 'menu', hidden: state.menuFor !== key },
    el(
      'button',
      {
        role: 'menuitem',
        type: 'button',
        onclick: () => {
          state.menuFor = null;
          menu.hidden = true;
          api('/sandbox/api/shortcut', { user: state.me, channel: m.channel, ts: m.ts });
        },
      },
      'Request approval',
    ),
  );
  return el(
    'div',
    { class: 'message-actions' },
    el(
      'button',
      {
        type: 'button',
        class: 'more',
        'aria-label': 'More actions',
        'aria-expanded': state.menuFor === key ? 'true' : 'false',
        onclick: () => {
          state.menuFor = state.menuFor === key ? null : key;
          menu.hidden = state.menuFor !== key;
        },
      },
      '⋯',
    ),
    menu,
  );
}

function renderSidebar() {
  const channels = $('channels');
  const apps = $('apps');
  channels.replaceChildren();
  apps.replaceChildren();
  for (const c of state.data.channels) {
    const isApp = c.kind === 'im';
    const label = isApp ? 'Approvals' : `# ${c.name}`;
    const note =
      !isApp && !c.appIsMember ? el('span', { class: 'note' }, 'app not in channel') : null;
    const item = el(
      'li',
      {},
      el(
        'button',
        { class: state.channel === c.id ? 'active' : '', onclick: () => select(c.id) },
        label,
        note,
      ),
    );
    (isApp ? apps : channels).append(item);
  }
  if (!state.data.channels.some((c) => c.kind === 'im')) {
    apps.append(
      el(
        'li',
        {},
        el(
          'button',
          { class: state.channel === 'app' ? 'active' : '', onclick: () => select('app') },
          'Approvals',
        ),
      ),
    );
  }
}

function currentChannel() {
  const channel = state.data.channels.find((c) => c.id === state.channel);
  if (channel) state.channelName = channel.kind === 'im' ? 'app' : channel.name;
  return channel;
}

function renderMain() {
  const channel = currentChannel();
  const isApp = state.channel === 'app' || channel?.kind === 'im';
  $('title').textContent = isApp ? 'Approvals' : `# ${channel?.name ?? ''}`;
  const tabs = $('tabs');
  tabs.replaceChildren();
  if (isApp) {
    for (const [tab, label] of [
      ['home', 'Home'],
      ['messages', 'Messages'],
    ]) {
      tabs.append(
        el(
          'button',
          {
            role: 'tab',
            class: state.tab === tab ? 'active' : '',
            'aria-selected': state.tab === tab,
            onclick: () => setTab(tab),
          },
          label,
        ),
      );
    }
  }
  const showHome = isApp && state.tab === 'home';
  $('home').hidden = !showHome;
  $('messages').hidden = showHome;
  $('composer').hidden = showHome;
  if (showHome) {
    $('home').replaceChildren(
      ...(state.data.home
        ? renderBlocks(state.data.home.blocks, ctx())
        : [el('p', { class: 'empty' }, 'Loading Home…')]),
    );
    return;
  }
  const list = [...state.data.messages, ...state.local]
    .filter((m) => m.channel === channel?.id && !m.threadTs)
    .sort((a, b) => Number(a.ts) - Number(b.ts));
  const box = $('messages');
  // A channel opens at its latest message; new ones keep it there unless the person scrolled up.
  const atBottom =
    box.dataset.channel !== channel?.id || box.scrollHeight - box.scrollTop - box.clientHeight < 40;
  box.dataset.channel = channel?.id ?? '';
  box.replaceChildren(
    ...(list.length
      ? list.map((m) => messageNode(m))
      : [
          el('p', { class: 'empty' }, 'No messages yet. Type /approve below to start an approval.'),
        ]),
  );
  if (atBottom) box.scrollTop = box.scrollHeight;
  $('composer-input').placeholder = isApp
    ? 'Message Approvals — try /approve help'
    : `Message #${channel?.name ?? ''} — try /approve New laptop`;
}

function renderThread() {
  const pane = $('thread');
  if (!state.thread) {
    pane.hidden = true;
    return;
  }
  const list = $('thread-messages');
  const atBottom =
    list.dataset.thread !== state.thread.ts ||
    list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  list.dataset.thread = state.thread.ts;
  const parent =
    state.data.messages.find(
      (m) => m.ts === state.thread.ts && m.channel === state.thread.channel,
    ) ?? state.thread;
  const replies = state.data.messages.filter(
    (m) => m.threadTs === parent.ts && m.channel === parent.channel,
  );
  list.replaceChildren(
    messageNode(parent, { inThread: true }),
    el('hr', { class: 'bk-divider' }),
    ...replies.map((m) => messageNode(m, { inThread: true })),
  );
  pane.hidden = false;
  if (atBottom) list.scrollTop = list.scrollHeight;
}

let shownModal = '';

function renderModal() {
  const root = $('modal-root');
  const open = state.data.views.filter((v) => !state.closedLocally.has(v.id)).at(-1);
  if (!open) {
    shownModal = '';
    root.replaceChildren();
    return;
  }
  const v = open.view;
  // Redraw only when the modal itself changed: a redraw would take the cursor from the person typing.
  const key = JSON.stringify([open.id, v, state.errors[open.id] ?? null]);
  if (key === shownModal) return;
  shownModal = key;
  const form = el('form', { class: 'modal', role: 'dialog', 'aria-label': v.title.text });
  const body = el(
    'div',
    { class: 'body' },
    renderBlocks(
      v.blocks,
      ctx({
        errors: state.errors[open.id],
        // A button in a modal goes to the app with the view and what its fields hold, as in Slack.
        onAction: (element) =>
          api(`/sandbox/api/views/${open.id}/action`, {
            actionId: element.action_id,
            value: element.value ?? '',
            values: collectValues(body),
          }),
      }),
    ),
  );
  form.append(
    el(
      'header',
      {},
      el('h2', {}, v.title.text),
      el(
        'button',
        {
          type: 'button',
          class: 'icon',
          'aria-label': 'Close',
          onclick: () => closeModal(open.id),
        },
        '×',
      ),
    ),
    body,
    el(
      'footer',
      {},
      el(
        'button',
        { type: 'button', onclick: () => closeModal(open.id) },
        v.close?.text ?? 'Close',
      ),
      v.submit ? el('button', { type: 'submit', class: 'submit' }, v.submit.text) : null,
    ),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    // Like Slack, one submission at a time: the button waits until the app has answered.
    const submit = form.querySelector('button.submit');
    if (!submit || submit.disabled) return;
    submit.disabled = true;
    form.setAttribute('aria-busy', 'true');
    try {
      const result = await api(`/sandbox/api/views/${open.id}/submit`, {
        values: collectValues(body),
      });
      state.errors[open.id] = result.errors ?? {};
    } catch (error) {
      if (!(error instanceof Offline)) throw error;
      // The form stays as it is, with Slack's word that it did not go through.
      form.querySelector('.modal-trouble')?.remove();
      form
        .querySelector('footer')
        .prepend(el('p', { class: 'modal-trouble', role: 'alert' }, MODAL_TROUBLE));
      return;
    } finally {
      submit.disabled = false;
      form.removeAttribute('aria-busy');
    }
    await refresh();
  });
  // Like Slack, an update of the same modal keeps what the person typed in inputs whose block and
  // action ids stay the same; an input given a new block id shows the app's initial value.
  const previous = root.querySelector('form.modal');
  const inputKey = (input) =>
    `${input.closest('[data-block]')?.dataset.block}/${input.dataset.action}`;
  if (previous?.dataset.view === open.id) {
    const typed = new Map(
      [...previous.querySelectorAll('[data-action][data-dirty]')].map((i) => [
        inputKey(i),
        i.value,
      ]),
    );
    for (const input of body.querySelectorAll('[data-action]')) {
      if (!typed.has(inputKey(input))) continue;
      input.value = typed.get(inputKey(input));
      input.dataset.dirty = '1';
    }
  }
  form.dataset.view = open.id;
  form.addEventListener('input', (event) => {
    if (event.target.dataset) event.target.dataset.dirty = '1';
  });
  form.addEventListener('change', (event) => {
    if (event.target.dataset) event.target.dataset.dirty = '1';
    // A pick in an input with dispatch_action goes to the app at once, as Slack sends it.
    if (event.target.value && event.target.closest?.('[data-dispatch]'))
      api(`/sandbox/api/views/${open.id}/select`, {
        actionId: event.target.dataset.action,
        value: event.target.value,
        values: collectValues(body),
      });
  });
  root.replaceChildren(backdrop(form, () => closeModal(open.id)));
}

/** A modal's overlay: a click on it, outside the modal, closes the modal, as in Slack. */
function backdrop(form, close) {
  const overlay = el('div', { class: 'overlay' }, form);
  overlay.addEventListener('click', (event) => {
    if (event.target === overlay) close();
  });
  return overlay;
}

/**
 * The "Run workflow" panel: plays Workflow Builder running a workflow whose one step is the app's
 * "Request approval", with the inputs typed here, and shows each run's outputs once it completes.
 */
function openWorkflow() {
  // The step's inputs as Block Kit inputs, drawn by the same renderer as the app's forms; each
  // action_id is the name of the input it fills.
  const input = (action, label, element, optional = false) => ({
    type: 'input',
    block_id: action,
    optional,
    label: { type: 'plain_text', text: label },
    element: { action_id: action, ...element },
  });
  const text = { type: 'plain_text_input' };
  const body = el(
    'div',
    { class: 'body' },
    el(
      'p',
      { class: 'hint' },
      'A workflow with one step, the app’s “Request approval”. The step ends when the approval does; its outputs show below.',
    ),
    renderBlocks(
      [
        input('requester', 'Requester', { type: 'users_select', initial_user: state.me }),
        input(
          'approver',
          'Approver',
          {
            type: 'users_select',
            placeholder: { type: 'plain_text', text: 'Suggest from the org chart' },
          },
          true,
        ),
        input('title', 'Title', text),
        input('note', 'Note', { ...text, multiline: true }),
        input(
          'channel',
          'Post in',
          {
            type: 'conversations_select',
            placeholder: { type: 'plain_text', text: 'The requester’s DM' },
          },
          true,
        ),
        input(
          'later_steps',
          'Then also ask',
          {
            ...text,
            multiline: true,
            placeholder: {
              type: 'plain_text',
              text: 'e.g. second-level leader, zhou.lan@corp.example (one a line or comma separated)',
            },
          },
          true,
        ),
      ],
      ctx(),
    ),
    el('h3', {}, 'Runs'),
    el('div', { id: 'workflow-runs' }),
  );
  const form = el(
    'form',
    { class: 'modal workflow', role: 'dialog', 'aria-label': 'Run workflow' },
    el(
      'header',
      {},
      el('h2', {}, 'Run workflow'),
      el(
        'button',
        { type: 'button', class: 'icon', 'aria-label': 'Close', onclick: closeWorkflow },
        '×',
      ),
    ),
    body,
    el(
      'footer',
      {},
      el('button', { type: 'button', onclick: closeWorkflow }, 'Close'),
      el('button', { type: 'submit', class: 'submit' }, 'Run'),
    ),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const run = form.querySelector('button.submit');
    run.disabled = true;
    try {
      await api('/sandbox/api/workflow', { user: state.me, inputs: collectValues(body) });
    } finally {
      run.disabled = false;
    }
    await refresh();
  });
  $('workflow-root').replaceChildren(backdrop(form, closeWorkflow));
  renderRuns();
}

function closeWorkflow() {
  $('workflow-root').replaceChildren();
}

function renderRuns() {
  const box = $('workflow-runs');
  if (!box) return;
  const name = (id) => names().get(id) ?? id;
  const outputs = (o) =>
    el(
      'dl',
      { class: 'outputs' },
      ...Object.entries(o).flatMap(([key, value]) => [
        el('dt', {}, key),
        el(
          'dd',
          {},
          key === 'decided_by'
            ? name(value)
            : key === 'decided_at'
              ? new Date(value * 1000).toLocaleString()
              : String(value),
        ),
      ]),
    );
  const runs = [...state.data.executions].reverse();
  box.replaceChildren(
    ...(runs.length
      ? runs.map((r) =>
          el(
            'div',
            { class: 'run', 'data-run': r.id, 'data-state': r.state },
            el(
              'div',
              { class: 'row' },
              el('strong', {}, r.inputs.title || '(no title)'),
              el('span', { class: `state ${r.state}` }, r.state),
            ),
            r.outputs ? outputs(r.outputs) : null,
            r.error ? el('p', { class: 'error' }, r.error) : null,
          ),
        )
      : [el('p', { class: 'hint' }, 'No runs yet.')]),
  );
}

async function closeModal(id) {
  // Slack closes a modal at once; telling the app (view_closed) is Slack's business after that.
  state.closedLocally.add(id);
  renderModal();
  try {
    await api(`/sandbox/api/views/${id}/close`, {});
    await refresh();
  } catch (error) {
    if (!(error instanceof Offline)) throw error;
  }
}

async function renderApprovals() {
  if (!state.online) return;
  const { approvals } = await api('/simulator/api/approvals').catch((error) => {
    if (error instanceof Offline) return { approvals: state.approvals };
    throw error;
  });
  state.approvals = approvals;
  const who = (login) => state.data.people.find((p) => p.email === login)?.name ?? login;
  const words = { pending: '待办 pending', approved: '同意 approved', rejected: '不同意 rejected' };
  $('approvals').replaceChildren(
    ...(approvals.length
      ? approvals.map((a) =>
          el(
            'div',
            { class: 'approval', 'data-djbh': a.djbh },
            el(
              'div',
              { class: 'row' },
              el('strong', {}, a.title),
              el('span', { class: `state ${a.decision}` }, words[a.decision]),
            ),
            el('span', { class: 'djbh' }, a.djbh),
            el('span', { class: 'who' }, `${who(a.requester)} → ${who(a.approver)}`),
            a.decision === 'pending'
              ? el(
                  'div',
                  { class: 'decide' },
                  el('span', { class: 'as' }, `Decide as ${who(a.approver)}:`),
                  el(
                    'div',
                    { class: 'buttons' },
                    el(
                      'button',
                      { class: 'bk-button primary', onclick: () => decide(a.djbh, 'agree') },
                      'Agree',
                    ),
                    el(
                      'button',
                      { class: 'bk-button danger', onclick: () => decide(a.djbh, 'refuse') },
                      'Refuse',
                    ),
                  ),
                )
              : null,
          ),
        )
      : [el('p', { class: 'hint' }, 'No approvals yet.')]),
  );
}

async function decide(djbh, decision) {
  await api(`/simulator/api/approvals/${djbh}/decision`, { decision });
  await renderApprovals();
}

function openThread(message) {
  state.thread = { channel: message.channel, ts: message.ts };
  renderThread();
}

async function select(channel) {
  state.channel = channel;
  state.thread = null;
  const c = currentChannel();
  if (c?.kind === 'im' || channel === 'app')
    await setTab(state.tab === 'messages' ? 'home' : state.tab);
  else render();
}

async function setTab(tab) {
  state.tab = tab;
  if (tab === 'home') await api('/sandbox/api/home', { user: state.me });
  await refresh();
}

function render() {
  renderSidebar();
  renderMain();
  renderThread();
  renderModal();
  renderRuns();
}

async function refresh() {
  state.data = await api(`/sandbox/api/state?user=${encodeURIComponent(state.me)}`);
  if (state.channel === 'app') {
    const dm = state.data.channels.find((c) => c.kind === 'im');
    if (dm) state.channel = dm.id;
  }
  // A channel this workspace does not have (the sandbox restarted with new ids): the same by name.
  if (state.channel && state.channel !== 'app' && !currentChannel())
    state.channel =
      state.data.channels.find((c) => c.kind !== 'im' && c.name === state.channelName)?.id ?? '';
  if (!state.channel)
    state.channel = state.data.channels.find((c) => c.kind === 'public')?.id ?? '';
  render();
}

async function send(input, threadTs) {
  const text = input.value.trim();
  if (!text) return;
  input.value = '';
  const channel = currentChannel()?.id ?? state.channel;
  try {
    if (!state.online) throw new Offline('offline');
    await api('/sandbox/api/message', {
      user: state.me,
      channel,
      text,
      ...(threadTs ? { threadTs } : {}),
    });
  } catch (error) {
    if (!(error instanceof Offline)) throw error;
    if (text.startsWith('/')) {
      // As Slack does: Slackbot says, to you alone, that the command did not reach the app.
      state.local.push({
        channel,
        ts: String(Date.now() / 1000),
        user: state.data.slackbotId,
        text: dispatchFailed(text.split(/\s/)[0]),
        ephemeral: true,
        blocks: [],
      });
    } else {
      // A message that could not be sent stays in the box, to send again.
      input.value = text;
    }
    $('messages').dataset.channel = '';
    render();
    return;
  }
  // What you send is what you want to see: jump to it, as Slack does.
  $('messages').dataset.channel = '';
  if (threadTs) $('thread-messages').dataset.thread = '';
  await refresh();
}

/**
 * Where a person is and their time there ("Los Angeles 08:15"): reminders reach them only inside
 * their working hours in that zone.
 */
function localTime(timeZone) {
  if (!timeZone) return '';
  const city = timeZone.split('/').at(-1).replaceAll('_', ' ');
  try {
    const time = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
    }).format(new Date());
    return `${city} ${time}`;
  } catch {
    return city;
  }
}

/**
 * Fills "You are" with the workspace's people and chooses who the page plays: the same person as
 * before (by e-mail, since a restarted sandbox gives everyone new ids), else the stored one.
 */
function choosePeople(first) {
  const people = first.people.filter((p) => !p.isBot);
  const who = $('who');
  who.replaceChildren(
    ...people.map((p) =>
      el('option', { value: p.id }, `${p.name} · ${p.locale} · ${localTime(p.timeZone)}`),
    ),
  );
  const stored = localStorage.getItem('sandbox-user');
  const same = state.meEmail && people.find((p) => p.email === state.meEmail);
  state.me = same
    ? same.id
    : people.some((p) => p.id === stored)
      ? stored
      : (people.find((p) => p.locale === 'en-US' && p.email?.startsWith('sam'))?.id ??
        people[0].id);
  state.meEmail = people.find((p) => p.id === state.me)?.email ?? '';
  who.value = state.me;
}

function goOffline() {
  if (!state.online) return;
  state.online = false;
  document.body.dataset.online = 'false';
  $('connection').hidden = false;
  reconnect();
}

/**
 * Asks every second until the sandbox answers again, then carries on as a Slack client does after
 * a reconnect: a new session (forms that were open are gone), the same person and channel by
 * name, everything drawn afresh. No reload needed.
 */
async function reconnect() {
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    let first;
    try {
      const response = await fetch('/sandbox/api/state?user=');
      if (!response.ok) continue;
      first = await response.json();
    } catch {
      continue;
    }
    choosePeople(first);
    const channel = first.channels.find((c) => c.kind !== 'im' && c.name === state.channelName);
    state.channel = state.channelName === 'app' ? 'app' : (channel?.id ?? '');
    state.thread = null;
    state.menuFor = null;
    state.local = [];
    state.errors = {};
    state.closedLocally.clear();
    state.online = true;
    try {
      await api('/sandbox/api/session', { user: state.me });
      await refresh();
      await renderApprovals();
    } catch (error) {
      if (error instanceof Offline) continue;
      throw error;
    }
    $('connection').hidden = true;
    document.body.dataset.online = 'true';
    listen();
    return;
  }
}

let events;

/** Live: the workspace says when anything changes; the service panel follows along. */
function listen() {
  events?.close();
  events = new EventSource('/sandbox/api/events');
  let pending = false;
  events.onmessage = () => {
    if (pending) return;
    pending = true;
    setTimeout(async () => {
      pending = false;
      try {
        await refresh();
        await renderApprovals();
      } catch (error) {
        if (!(error instanceof Offline)) throw error;
      }
    }, 100);
  };
  // The stream breaking is the first sign the sandbox stopped.
  events.onerror = () => {
    events.close();
    goOffline();
  };
}

async function start() {
  const first = await api('/sandbox/api/state?user=');
  choosePeople(first);
  const who = $('who');
  who.addEventListener('change', async () => {
    state.me = who.value;
    state.meEmail = state.data?.people.find((p) => p.id === state.me)?.email ?? '';
    localStorage.setItem('sandbox-user', state.me);
    state.channel = '';
    state.thread = null;
    state.tab = 'messages';
    await refresh();
  });
  $('composer').addEventListener('submit', (e) => {
    e.preventDefault();
    send($('composer-input'));
  });
  $('thread-composer').addEventListener('submit', (e) => {
    e.preventDefault();
    send($('thread-input'), state.thread?.ts);
  });
  // Permalinks (thread links in DMs and on Home) open the message's thread in its channel.
  document.addEventListener('click', (event) => {
    const link = event.target.closest?.('[data-permalink]');
    if (!link) return;
    event.preventDefault();
    const [channel, ts] = link.dataset.permalink.split('/');
    state.channel = channel;
    state.tab = 'messages';
    state.thread = { channel, ts };
    render();
  });
  $('thread-close').addEventListener('click', () => {
    state.thread = null;
    renderThread();
  });
  // The ⚡ menu: the app's global shortcut.
  $('shortcuts').addEventListener('click', () => {
    $('shortcuts-menu').hidden = !$('shortcuts-menu').hidden;
  });
  $('shortcut-request').addEventListener('click', () => {
    $('shortcuts-menu').hidden = true;
    api('/sandbox/api/shortcut', { user: state.me });
  });
  $('workflow-open').addEventListener('click', openWorkflow);
  // Esc closes what is on top: the app's modal, else the Run workflow panel.
  document.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape') return;
    const open = $('modal-root').querySelector('form.modal');
    if (open?.dataset.view) closeModal(open.dataset.view);
    else if ($('workflow-root').firstChild) closeWorkflow();
  });
  // Everything above is synchronous, so no choice the person makes meanwhile goes unheard.
  useEmoji(await (await fetch('/sandbox/emoji.json')).json());
  // A reload is a new Slack client: open forms and messages only you saw do not come back.
  await api('/sandbox/api/session', { user: state.me });
  await refresh();
  await renderApprovals();
  document.body.dataset.ready = 'true';
  document.body.dataset.online = 'true';
  listen();
  setInterval(renderApprovals, 3000);
}

start();
