/** What `/approve <text>` asks for. Anything that is not a subcommand is the title to prefill. */
export type ApproveCommand =
  | { kind: 'new'; title: string }
  | { kind: 'help' }
  | { kind: 'status'; djbh: string }
  | { kind: 'list' }
  | { kind: 'link' }
  | { kind: 'unlink' }
  | { kind: 'templates' }
  | { kind: 'report' };

const WORDS: Record<string, ApproveCommand['kind']> = {
  help: 'help',
  帮助: 'help',
  status: 'status',
  状态: 'status',
  list: 'list',
  列表: 'list',
  link: 'link',
  关联: 'link',
  unlink: 'unlink',
  取消关联: 'unlink',
  templates: 'templates',
  模板: 'templates',
  report: 'report',
  报告: 'report',
};

export function parseApproveCommand(text: string): ApproveCommand {
  const trimmed = text.trim();
  const [first = '', ...rest] = trimmed.split(/\s+/);
  const kind = WORDS[first.toLowerCase()];
  const argument = rest.join(' ');
  switch (kind) {
    case 'status':
      return { kind, djbh: argument };
    case 'help':
    case 'list':
    case 'link':
    case 'unlink':
    case 'templates':
    case 'report':
      // "/approve list of parts" is a title, not the list subcommand.
      return argument ? { kind: 'new', title: trimmed } : { kind };
    default:
      return { kind: 'new', title: trimmed };
  }
}
