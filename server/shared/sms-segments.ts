/**
 * SMS segment counting for the composer hint (billing uses Twilio's `numSegments`). See docs/providers.md#sms-segments.
 *
 * - GSM-7 when every character is in the GSM 03.38 basic set or its extension table; extension characters
 *   (`^ { } \ [ ~ ] | €` and form feed) cost 2 septets (escape + char). Limits: 160 septets in one SMS, 153 per
 *   part when split.
 * - UCS-2 otherwise (the whole message switches), counting UTF-16 code units (most emoji cost 2). Limits: 70 units
 *   in one SMS, 67 per part.
 * - Splitting never cuts a character in two, like Twilio's calculator (sms-segments-calculator): an extension
 *   character's 2 septets stay in one part, and in UCS-2 a grapheme cluster (surrogate pair, emoji with modifiers
 *   or ZWJ sequence, letter + combining mark) stays in one part. A part may therefore hold fewer than 153/67 units,
 *   and `segments` can exceed ceil(units / 153) by one or more, e.g. 152 × "a" + "€" + 152 × "a" = 3 segments.
 * - `units` is the payload size: septets (GSM-7) or UTF-16 code units (UCS-2), without the 6-byte multipart headers.
 * - Empty text: `{ encoding: 'GSM-7', segments: 1, units: 0 }`, as Twilio's calculator reports it (a message is at
 *   least one SMS; the composer shows "0/160").
 */
type SmsEncoding = 'GSM-7' | 'UCS-2';

type SmsSegmentInfo = {
  encoding: SmsEncoding;
  segments: number;
  units: number;
};

const GSM7_SINGLE_LIMIT = 160;
const GSM7_PART_LIMIT = 153;
const UCS2_SINGLE_LIMIT = 70;
const UCS2_PART_LIMIT = 67;

/** GSM 03.38 default alphabet (the 0x1B escape itself is not a character). */
const GSM7_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅå' +
  'Δ_ΦΓΛΩΠΨΣΘΞÆæßÉ' +
  ' !"#¤%&\'()*+,-./' +
  '0123456789:;<=>?' +
  '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§' +
  '¿abcdefghijklmnopqrstuvwxyzäöñüà';

/** GSM 03.38 extension table (default national language), each sent as escape + char = 2 septets. */
const GSM7_EXTENSION = '\f^{}\\[~]|€';

const BASIC_SET = new Set(GSM7_BASIC);
const EXTENSION_SET = new Set(GSM7_EXTENSION);

/** Septets a character costs in GSM-7, or 0 when it has no GSM-7 encoding. */
function gsmSeptets(char: string): number {
  if (BASIC_SET.has(char)) return 1;
  if (EXTENSION_SET.has(char)) return 2;
  return 0;
}

export function isGsm7(text: string): boolean {
  for (const char of text) {
    if (gsmSeptets(char) === 0) return false;
  }
  return true;
}

let graphemeSegmenter: Intl.Segmenter | undefined;

function graphemes(text: string): Iterable<string> {
  graphemeSegmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  const segments = graphemeSegmenter.segment(text);
  return {
    *[Symbol.iterator]() {
      for (const s of segments) yield s.segment;
    },
  };
}

/** Greedy packing into parts of `partLimit` units, never splitting an item. */
function countParts(costs: Iterable<number>, partLimit: number): number {
  let parts = 1;
  let fill = 0;
  for (const cost of costs) {
    if (fill + cost > partLimit && fill > 0) {
      parts += 1;
      fill = 0;
    }
    fill += cost;
    // An item larger than a whole part (a pathological grapheme cluster) spills over as many parts as it needs.
    while (fill > partLimit) {
      parts += 1;
      fill -= partLimit;
    }
  }
  return parts;
}

function* ucs2Costs(text: string): Generator<number> {
  for (const g of graphemes(text)) yield g.length;
}

function* gsmCosts(text: string): Generator<number> {
  for (const char of text) yield gsmSeptets(char);
}

/**
 * Text made only of GSM-7 basic characters that are also ASCII (letters, digits, space, line breaks
 * and the punctuation the basic set shares with ASCII; not `[\]^{|}~` or the backtick): one septet
 * per character, so its parts are plain division. Most texts are; a bulk request counts a thousand.
 */
const ASCII_GSM7_BASIC = /^[\n\r -Z_a-z]*$/;

export function smsSegments(text: string): SmsSegmentInfo {
  if (ASCII_GSM7_BASIC.test(text)) {
    const units = text.length;
    const segments = units <= GSM7_SINGLE_LIMIT ? 1 : Math.ceil(units / GSM7_PART_LIMIT);
    return { encoding: 'GSM-7', segments, units };
  }
  return countedSegments(text);
}

/** smsSegments of any text, character by character (exported for the test of the ASCII shortcut). */
export function countedSegments(text: string): SmsSegmentInfo {
  if (isGsm7(text)) {
    let units = 0;
    for (const cost of gsmCosts(text)) units += cost;
    const segments = units <= GSM7_SINGLE_LIMIT ? 1 : countParts(gsmCosts(text), GSM7_PART_LIMIT);
    return { encoding: 'GSM-7', segments, units };
  }
  const units = text.length;
  const segments = units <= UCS2_SINGLE_LIMIT ? 1 : countParts(ucs2Costs(text), UCS2_PART_LIMIT);
  return { encoding: 'UCS-2', segments, units };
}
