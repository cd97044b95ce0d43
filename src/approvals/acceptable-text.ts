import { which as emojiName } from 'node-emoji';

/**
 * The approval service writes values straight into MySQL's 3-byte `utf8` columns and refuses
 * ASCII single quotes, so text typed in Slack has to be adapted before it is sent.
 * Our choices, so that nothing the person wrote silently disappears:
 * - `'` becomes `’` (U+2019), which reads the same;
 * - an emoji becomes its `:short_name:`, as Slack itself writes it;
 * - any other character outside the Basic Multilingual Plane (rare CJK, maths letters) becomes `□`;
 * - over-long text is refused, never cut.
 * Backslashes are not touched here: the client escapes them on the wire so they are stored as typed.
 */

export type TextChange = 'quote' | 'emoji' | 'unsupported-character';

export interface AdaptedText {
  text: string;
  changes: TextChange[];
}

/** Column limits of the service, in characters (code points). */
export const TEXT_LIMITS = { title: 200, note: 5000, login: 100 } as const;

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const outsideBmp = /[\u{10000}-\u{10FFFF}]/u;
const REPLACEMENT = '□';

/** Adapts one value for the service and reports which kinds of change were made. */
export function adaptText(input: string): AdaptedText {
  const changes = new Set<TextChange>();
  let text = input;
  if (text.includes("'")) {
    text = text.replaceAll("'", '’');
    changes.add('quote');
  }
  if (outsideBmp.test(text)) {
    let out = '';
    for (const { segment } of segmenter.segment(text)) {
      if (!outsideBmp.test(segment)) {
        out += segment;
        continue;
      }
      const name = emojiName(segment);
      if (name) {
        out += `:${name}:`;
        changes.add('emoji');
      } else {
        out += REPLACEMENT;
        changes.add('unsupported-character');
      }
    }
    text = out;
  }
  return { text, changes: [...changes] };
}

/** Length as the service's database counts it: code points, not UTF-16 units. */
export function serviceLength(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}
