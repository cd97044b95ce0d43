/**
 * Prefills for the request form from text someone already wrote (a message they want approved).
 * Lengths are in characters (code points), as the form and the service count them.
 */

/** The first line with text in it, cut at a word so that it fits `max` with an ellipsis. */
export function titleFromText(text: string, max: number): string {
  const line = text
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.length > 0);
  if (!line) return '';
  const chars = [...line];
  if (chars.length <= max) return line;
  const head = chars.slice(0, max - 1).join('');
  // Back to the last space when there is one in the second half; Chinese has none, so cut there.
  const space = head.lastIndexOf(' ');
  const cut = space >= head.length / 2 ? head.slice(0, space) : head;
  return `${cut.trimEnd()}…`;
}

/** The text, then a line saying where it came from, cut (never the link) to fit `max`. */
export function noteWithSource(text: string, source: string | undefined, max: number): string {
  const tail = source ? `\n\n${source}` : '';
  const room = max - [...tail].length;
  const chars = [...text.trim()];
  const body = chars.length <= room ? chars.join('') : `${chars.slice(0, room - 1).join('')}…`;
  return `${body}${tail}`;
}
