/**
 * Slack's Block Kit limits (Slack's Block Kit reference), checked the way Slack refuses a surface:
 * the stand-in answers `invalid_blocks` / `invalid_arguments` with these messages, so a builder
 * that breaks a limit fails in tests and in the sandbox as it would in Slack.
 */

type Json = Record<string, unknown>;

const asArray = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);
const textOf = (v: unknown): string =>
  typeof v === 'object' && v !== null && typeof (v as Json).text === 'string'
    ? ((v as Json).text as string)
    : '';
const len = (s: string) => [...s].length;

export function checkView(view: Json): string[] {
  const problems: string[] = [];
  const blocks = asArray(view.blocks);
  if (view.type === 'modal') {
    for (const key of ['title', 'submit', 'close'] as const) {
      if (view[key] !== undefined && len(textOf(view[key])) > 24)
        problems.push(`${key} is longer than 24 characters`);
    }
    if (!textOf(view.title)) problems.push('a modal needs a title');
    if (blocks.length > 100) problems.push(`a modal has at most 100 blocks, not ${blocks.length}`);
    if (blocks.some((b) => b.type === 'input') && view.submit === undefined)
      problems.push('a modal with an input block needs submit');
  } else if (view.type === 'home') {
    if (blocks.length > 100)
      problems.push(`the Home tab has at most 100 blocks, not ${blocks.length}`);
  } else {
    problems.push(`unknown view type ${String(view.type)}`);
  }
  if (typeof view.private_metadata === 'string' && view.private_metadata.length > 3000)
    problems.push('private_metadata is longer than 3000 characters');
  if (typeof view.callback_id === 'string' && view.callback_id.length > 255)
    problems.push('callback_id is longer than 255 characters');
  problems.push(...checkBlocks(blocks));
  return problems;
}

export function checkMessage(message: { text?: unknown; blocks?: unknown }): string[] {
  const blocks = asArray(message.blocks);
  const problems: string[] = [];
  if (blocks.length > 50) problems.push(`a message has at most 50 blocks, not ${blocks.length}`);
  if (typeof message.text === 'string' && message.text.length > 40_000)
    problems.push('text is longer than 40000');
  problems.push(...checkBlocks(blocks));
  return problems;
}

function checkBlocks(blocks: Json[]): string[] {
  const problems: string[] = [];
  const ids = new Set<string>();
  blocks.forEach((block, i) => {
    const where = `blocks[${i}] (${String(block.type)})`;
    if (typeof block.block_id === 'string') {
      if (block.block_id.length > 255) problems.push(`${where}: block_id is longer than 255`);
      if (ids.has(block.block_id))
        problems.push(`${where}: block_id ${block.block_id} is not unique`);
      ids.add(block.block_id);
    }
    switch (block.type) {
      case 'header':
        if (len(textOf(block.text)) > 150)
          problems.push(`${where}: header text is longer than 150`);
        break;
      case 'section': {
        if (len(textOf(block.text)) > 3000) problems.push(`${where}: text is longer than 3000`);
        const fields = asArray(block.fields);
        if (fields.length > 10) problems.push(`${where}: more than 10 fields`);
        if (fields.some((f) => len(textOf(f)) > 2000))
          problems.push(`${where}: a field is longer than 2000`);
        if (!textOf(block.text) && fields.length === 0)
          problems.push(`${where}: needs text or fields`);
        if (block.accessory) problems.push(...checkElement(block.accessory as Json, where));
        break;
      }
      case 'context':
        if (asArray(block.elements).length > 10) problems.push(`${where}: more than 10 elements`);
        break;
      case 'actions': {
        const elements = asArray(block.elements);
        if (elements.length > 25) problems.push(`${where}: more than 25 elements`);
        for (const e of elements) problems.push(...checkElement(e, where));
        break;
      }
      case 'input':
        if (len(textOf(block.label)) > 2000) problems.push(`${where}: label is longer than 2000`);
        if (block.hint && len(textOf(block.hint)) > 2000)
          problems.push(`${where}: hint is longer than 2000`);
        if (!block.element) problems.push(`${where}: needs an element`);
        else problems.push(...checkElement(block.element as Json, where));
        break;
      case 'divider':
        break;
      default:
        problems.push(`${where}: block type not supported by the stand-in`);
    }
  });
  return problems;
}

function checkElement(element: Json, where: string): string[] {
  const problems: string[] = [];
  if (element.type === 'button' && len(textOf(element.text)) > 75)
    problems.push(`${where}: button text is longer than 75`);
  if (element.type === 'button' && typeof element.url === 'string' && element.url.length > 3000)
    problems.push(`${where}: button url is longer than 3000`);
  if (element.type === 'plain_text_input' && element.max_length !== undefined) {
    const max = Number(element.max_length);
    if (!(max >= 1 && max <= 3000))
      problems.push(`${where}: max_length must be between 1 and 3000`);
    // Strict on purpose: the app must not count on Slack taking (or quietly cutting) such a value.
    if (typeof element.initial_value === 'string' && len(element.initial_value) > max)
      problems.push(`${where}: initial_value is longer than max_length`);
  }
  if (typeof element.confirm === 'object' && element.confirm !== null) {
    const confirm = element.confirm as Json;
    for (const [key, max] of [
      ['title', 100],
      ['text', 300],
      ['confirm', 30],
      ['deny', 30],
    ] as const)
      if (len(textOf(confirm[key])) > max)
        problems.push(`${where}: confirm ${key} is longer than ${max}`);
  }
  const options = asArray(element.options);
  if (options.length > 100) problems.push(`${where}: more than 100 options`);
  for (const option of options) {
    if (len(textOf(option.text)) > 75) problems.push(`${where}: option text is longer than 75`);
    if (typeof option.value === 'string' && option.value.length > 150)
      problems.push(`${where}: option value is longer than 150`);
  }
  return problems;
}
