/**
 * A Slack message's text as a person reads it: mentions by name, links by their label, Slack's
 * escapes undone. For prefilling a form, which shows plain text.
 */
export function readableText(text: string, nameOf: (userId: string) => string | undefined): string {
  return text
    .replace(/<([^<>]+)>/g, (_whole, inner: string) => {
      const [target = '', label] = inner.split('|');
      if (target.startsWith('@')) return `@${label ?? nameOf(target.slice(1)) ?? target.slice(1)}`;
      if (target.startsWith('#')) return `#${label ?? target.slice(1)}`;
      if (target.startsWith('!')) return `@${label ?? target.slice(1).split('^')[0]}`;
      return label ?? target;
    })
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
}

/** The user ids a message mentions, to look their names up. */
export function mentionedUsers(text: string): string[] {
  return [...new Set([...text.matchAll(/<@([A-Z0-9]+)(?:\|[^>]*)?>/g)].map((m) => m[1] ?? ''))];
}
