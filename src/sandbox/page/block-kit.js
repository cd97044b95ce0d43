// Renders the Block Kit the app sends (header, section, context, divider, actions, input with
// plain text, select and user select) as Slack shows it, with Slack's mrkdwn.

// Slack's emoji names; the page loads the full table (useEmoji) and these cover the app's own
// until it has, plus Slack's aliases the table spells differently.
const EMOJI = {
  hourglass_flowing_sand: '⏳',
  white_check_mark: '✅',
  x: '❌',
  warning: '⚠️',
  office: '🏢',
  bell: '🔔',
  zzz: '💤',
  heavy_minus_sign: '➖',
  grey_question: '❔',
  thumbsup: '👍',
  thumbsdown: '👎',
};

/** Adds emoji names (name → character) to the ones the page draws. */
export function useEmoji(table) {
  for (const [name, character] of Object.entries(table)) EMOJI[name] ??= character;
}

function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat())
    if (child !== null && child !== undefined) node.append(child);
  return node;
}

/** Slack's escapes back to the characters they stand for; the DOM shows them as text. */
const unescapeSlack = (s) =>
  s
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&quot;', '"')
    .replaceAll('&amp;', '&');

const emoji = (text) => text.replace(/:([a-z0-9_+-]+):/g, (whole, name) => EMOJI[name] ?? whole);

/**
 * Slack mrkdwn as DOM nodes: quotes, code, bold, italic, strike, emoji, mentions and links.
 * Nothing the text holds is ever parsed as HTML: every piece of it becomes a text node.
 * The input is Slack-escaped (&amp; &lt; &gt;); a raw < only opens a mention or a link.
 */
export function mrkdwn(text, ctx) {
  const fragment = document.createDocumentFragment();
  const parts = text.split(/```([\s\S]+?)```/);
  parts.forEach((part, index) => {
    if (index % 2 === 1) {
      fragment.append(el('pre', {}, el('code', {}, unescapeSlack(part))));
      return;
    }
    let quote = null;
    part.split('\n').forEach((line, i) => {
      const quoted = /^(&gt;|>)(.*)$/.exec(line);
      if (quoted) {
        if (quote) quote.append(el('br'));
        else {
          quote = el('blockquote');
          fragment.append(quote);
        }
        inline(quoted[2], ctx, quote);
        return;
      }
      if (i > 0 && !quote) fragment.append(el('br'));
      quote = null;
      inline(line, ctx, fragment);
    });
  });
  return fragment;
}

const INLINE = /<([^>]+)>|`([^`\n]+)`|(^|[\s(])([*_~])([^*_~\n]+)\4(?=$|[\s).,:;!?])/g;
const STYLE = { '*': 'strong', _: 'em', '~': 'del' };

function inline(text, ctx, parent) {
  let at = 0;
  for (const match of text.matchAll(INLINE)) {
    const [whole, token, code, before = '', mark, inner] = match;
    parent.append(emoji(unescapeSlack(text.slice(at, match.index))));
    if (token !== undefined) parent.append(tokenNode(token, ctx));
    else if (code !== undefined) parent.append(el('code', {}, unescapeSlack(code)));
    else {
      parent.append(before);
      const styled = el(STYLE[mark]);
      inline(inner, ctx, styled);
      parent.append(styled);
    }
    at = match.index + whole.length;
  }
  parent.append(emoji(unescapeSlack(text.slice(at))));
}

function tokenNode(inner, ctx) {
  if (inner.startsWith('@'))
    return el('span', { class: 'mention' }, `@${ctx.name(inner.slice(1).split('|')[0])}`);
  if (inner.startsWith('#'))
    return el('span', { class: 'mention' }, `#${ctx.channelName(inner.slice(1).split('|')[0])}`);
  const [url = '', label] = inner.split('|');
  if (!/^https?:\/\//.test(url)) return unescapeSlack(inner);
  // Slack draws emoji names in a link's text too (a linked title on Home or in a digest).
  const text = label === undefined ? unescapeSlack(url) : emoji(unescapeSlack(label));
  const place = permalinkTarget(url);
  if (place) return el('a', { href: '#', 'data-permalink': place }, text);
  return el('a', { href: unescapeSlack(url), target: '_blank', rel: 'noopener' }, text);
}

/** A permalink of the stand-in workspace opens the message here, as Slack would, not a dead page. */
function permalinkTarget(url) {
  const match = /^https:\/\/sandbox\.slack\.local\/archives\/(\w+)\/p(\d{10})(\d{6})$/.exec(url);
  return match ? `${match[1]}/${match[2]}.${match[3]}` : null;
}

function textNode(t, ctx) {
  if (!t) return el('span');
  const span = el('span');
  if (t.type === 'mrkdwn') span.append(mrkdwn(t.text, ctx));
  else span.textContent = emoji(t.text);
  return span;
}

function button(element, ctx) {
  const label = textNode(element.text, ctx);
  const cls = `bk-button${element.style ? ` ${element.style}` : ''}`;
  const place = element.url ? permalinkTarget(element.url) : null;
  if (place) return el('a', { class: cls, href: '#', 'data-permalink': place }, label);
  if (element.url)
    return el('a', { class: cls, href: element.url, target: '_blank', rel: 'noopener' }, label);
  return el(
    'button',
    {
      class: cls,
      type: 'button',
      onclick: () => {
        // Slack asks first when the button carries a confirmation dialog.
        const ask = element.confirm;
        if (ask && !window.confirm(`${ask.title?.text ?? ''}\n\n${plain(ask.text?.text ?? '')}`))
          return;
        ctx.onAction?.(element);
      },
    },
    label,
  );
}

/** mrkdwn as the plain text a browser's own dialog can show: markup and escapes undone. */
const plain = (text) => unescapeSlack(text.replace(/[*_~]/g, ''));

function control(element, ctx) {
  const id = `in-${element.action_id}`;
  switch (element.type) {
    case 'plain_text_input':
      return element.multiline
        ? el(
            'textarea',
            { id, 'data-action': element.action_id, maxlength: element.max_length },
            element.initial_value ?? '',
          )
        : el('input', {
            id,
            'data-action': element.action_id,
            maxlength: element.max_length,
            value: element.initial_value ?? '',
          });
    case 'users_select': {
      const select = el(
        'select',
        { id, 'data-action': element.action_id },
        // The app's placeholder, as Slack shows it (in the person's language).
        el('option', { value: '' }, element.placeholder?.text ?? ''),
      );
      for (const person of ctx.people.filter((p) => !p.isBot || p.id === element.initial_user)) {
        select.append(
          el(
            'option',
            { value: person.id, selected: person.id === element.initial_user },
            person.name,
          ),
        );
      }
      return select;
    }
    case 'datepicker':
      // The browser's own date picker, giving YYYY-MM-DD as Slack's does.
      return el('input', {
        id,
        type: 'date',
        'data-action': element.action_id,
        value: element.initial_date ?? '',
      });
    case 'conversations_select': {
      // The channels the person can see, as Slack's picker lists them.
      const select = el(
        'select',
        { id, 'data-action': element.action_id },
        el('option', { value: '' }, element.placeholder?.text ?? ''),
      );
      for (const channel of ctx.channels ?? [])
        select.append(
          el(
            'option',
            { value: channel.id, selected: channel.id === element.initial_conversation },
            `# ${channel.name}`,
          ),
        );
      return select;
    }
    case 'static_select': {
      const select = el(
        'select',
        { id, 'data-action': element.action_id },
        el('option', { value: '' }, element.placeholder?.text ?? 'Choose…'),
      );
      for (const option of element.options ?? []) {
        select.append(
          el(
            'option',
            { value: option.value, selected: element.initial_option?.value === option.value },
            option.text.text,
          ),
        );
      }
      return select;
    }
    default:
      return el('span', { class: 'hint' }, `(${element.type} is not shown in the sandbox)`);
  }
}

/** Blocks to DOM. In a modal, `ctx.errors` maps block_id to a field error. */
export function renderBlocks(blocks, ctx) {
  return (blocks ?? []).map((block) => {
    switch (block.type) {
      case 'header':
        return el('div', { class: 'bk-header' }, textNode(block.text, ctx));
      case 'divider':
        return el('hr', { class: 'bk-divider' });
      case 'context':
        return el(
          'div',
          { class: 'bk-context' },
          block.elements.map((e) => (e.type === 'image' ? null : textNode(e, ctx))),
        );
      case 'actions':
        return el(
          'div',
          { class: 'bk-actions' },
          block.elements.map((e) => (e.type === 'button' ? button(e, ctx) : null)),
        );
      case 'section': {
        const body = el(
          'div',
          { class: 'bk-section' },
          block.text ? textNode(block.text, ctx) : null,
        );
        if (block.fields)
          body.append(
            el(
              'div',
              { class: 'bk-fields' },
              block.fields.map((f) => el('div', {}, textNode(f, ctx))),
            ),
          );
        if (!block.accessory) return body;
        return el(
          'div',
          { class: 'bk-section-row' },
          body,
          block.accessory.type === 'button' ? button(block.accessory, ctx) : null,
        );
      }
      case 'input': {
        const error = ctx.errors?.[block.block_id];
        return el(
          'div',
          {
            class: `bk-input${error ? ' has-error' : ''}`,
            'data-block': block.block_id,
            // Slack sends a pick in such an input to the app at once (block_actions).
            'data-dispatch': block.dispatch_action === true,
          },
          el(
            'label',
            { for: `in-${block.element.action_id}` },
            block.label.text,
            block.optional ? el('span', { class: 'optional' }, ' (optional)') : null,
          ),
          control(block.element, ctx),
          block.hint ? el('div', { class: 'hint' }, block.hint.text) : null,
          error ? el('div', { class: 'error', role: 'alert' }, error) : null,
        );
      }
      default:
        return el('div', { class: 'hint' }, `(${block.type} block)`);
    }
  });
}

/** The values of a rendered modal's inputs, by action_id. */
export function collectValues(root) {
  const values = {};
  for (const input of root.querySelectorAll('[data-action]'))
    values[input.dataset.action] = input.value;
  return values;
}

export { el };
