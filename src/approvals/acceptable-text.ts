import { slackEmojiText } from './slack-emoji.ts';

/**
 * The approval service writes values straight into MySQL's 3-byte `utf8` columns and refuses
 * ASCII single quotes, so text typed in Slack has to be adapted before it is sent.
 * Our choices, so that nothing the person wrote silently disappears:
 * - `'` becomes `’` (U+2019), which reads the same;
 * - an emoji becomes its `:short_name:` (with its skin tone), as Slack itself writes it
 *   (slack-emoji.ts);
 * - any other character outside the Basic Multilingual Plane (rare CJK, maths letters) becomes `□`,
 *   and so does half a surrogate pair (the service's JSON parser refuses the whole body for one);
 * - over-long text is refused, never cut.
 * Backslashes are not touched here: the client escapes them on the wire so they are stored as typed.
 */

export type TextChange = 'quote' | 'emoji' | 'unsupported-character';

export interface AdaptedText {
  text: string;
  changes: TextChange[];
}

/**
 * Column limits of the service, in characters (code points). The note column holds 20,000 on
 * current installs; installs that missed the schema update that widened it hold 5,000
 * (APPROVAL_NOTE_LIMIT).
 */
export const TEXT_LIMITS = { title: 200, note: 20_000, login: 100 } as const;

export interface TextLimits {
  title: number;
  note: number;
}

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const outsideBmp = /[\u{10000}-\u{10FFFF}]/u;
const REPLACEMENT = '□';
// With the u flag a surrogate pair is one code point, so these match only lone halves.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
const LONE_SURROGATES = /[\uD800-\uDFFF]/gu;

/** Adapts one value for the service and reports which kinds of change were made. */
export function adaptText(input: string): AdaptedText {
  const changes = new Set<TextChange>();
  let text = input;
  if (LONE_SURROGATE.test(text)) {
    text = text.replace(LONE_SURROGATES, REPLACEMENT);
    changes.add('unsupported-character');
  }
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
      const name = slackEmojiText(segment);
      if (name) {
        out += name;
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
