import { describe, expect, it } from 'vitest';
import { countedSegments, isGsm7, smsSegments } from './sms-segments';

const EMOJI = '😀'; // U+1F600, a surrogate pair: 2 UTF-16 units

describe('smsSegments: docs/providers.md#sms-segments examples', () => {
  it('160 × "a" is one GSM-7 segment', () => {
    expect(smsSegments('a'.repeat(160))).toEqual({ encoding: 'GSM-7', segments: 1, units: 160 });
  });

  it('161 × "a" is two segments', () => {
    expect(smsSegments('a'.repeat(161))).toEqual({ encoding: 'GSM-7', segments: 2, units: 161 });
  });

  it('80 × "€" is one segment of 160 septets (extension chars cost 2)', () => {
    expect(smsSegments('€'.repeat(80))).toEqual({ encoding: 'GSM-7', segments: 1, units: 160 });
    expect(smsSegments('€'.repeat(81))).toEqual({ encoding: 'GSM-7', segments: 2, units: 162 });
  });

  it('"ç" forces UCS-2 while "Ç" stays GSM-7', () => {
    expect(smsSegments('Merci ç')).toEqual({ encoding: 'UCS-2', segments: 1, units: 7 });
    expect(smsSegments('Merci Ç')).toEqual({ encoding: 'GSM-7', segments: 1, units: 7 });
  });

  it('70 × "x" + one emoji = 72 units = 2 segments', () => {
    expect(smsSegments('x'.repeat(70) + EMOJI)).toEqual({ encoding: 'UCS-2', segments: 2, units: 72 });
  });
});

describe('smsSegments: boundaries', () => {
  it('GSM-7: 306 chars = 2 segments, 307 = 3; 459 = 3, 460 = 4', () => {
    expect(smsSegments('a'.repeat(306)).segments).toBe(2);
    expect(smsSegments('a'.repeat(307)).segments).toBe(3);
    expect(smsSegments('a'.repeat(459)).segments).toBe(3);
    expect(smsSegments('a'.repeat(460)).segments).toBe(4);
  });

  it('UCS-2: 70 units = 1, 71 = 2, 134 = 2, 135 = 3', () => {
    expect(smsSegments('ж'.repeat(70))).toEqual({ encoding: 'UCS-2', segments: 1, units: 70 });
    expect(smsSegments('ж'.repeat(71))).toEqual({ encoding: 'UCS-2', segments: 2, units: 71 });
    expect(smsSegments('ж'.repeat(134))).toEqual({ encoding: 'UCS-2', segments: 2, units: 134 });
    expect(smsSegments('ж'.repeat(135))).toEqual({ encoding: 'UCS-2', segments: 3, units: 135 });
  });

  it('an extension character is never split across parts', () => {
    // 152 + 2 + 152 = 306 septets, but the € does not fit in the 1 septet left in part 1.
    expect(smsSegments('a'.repeat(152) + '€' + 'a'.repeat(152))).toEqual({
      encoding: 'GSM-7',
      segments: 3,
      units: 306,
    });
    expect(smsSegments('a'.repeat(151) + '€' + 'a'.repeat(153)).segments).toBe(2);
  });

  it('a surrogate pair (emoji) is never split across parts', () => {
    // 66 + 2 + 66 = 134 units, but the emoji does not fit in the 1 unit left in part 1.
    expect(smsSegments('ж'.repeat(66) + EMOJI + 'ж'.repeat(66))).toEqual({
      encoding: 'UCS-2',
      segments: 3,
      units: 134,
    });
    expect(smsSegments('ж'.repeat(65) + EMOJI + 'ж'.repeat(67)).segments).toBe(2);
  });

  it('a multi-codepoint emoji (ZWJ family) is counted in UTF-16 units and kept in one part', () => {
    const family = '👨‍👩‍👧'; // 3 × 2 units + 2 ZWJ = 8 units
    expect(family.length).toBe(8);
    expect(smsSegments(family)).toEqual({ encoding: 'UCS-2', segments: 1, units: 8 });
    // 63 + 8 = 71 > 70 → split; the family does not fit in the 4 units left in part 1.
    expect(smsSegments('ж'.repeat(63) + family)).toEqual({ encoding: 'UCS-2', segments: 2, units: 71 });
  });
});

describe('smsSegments: character sets', () => {
  it('empty text is one GSM-7 segment of 0 units', () => {
    expect(smsSegments('')).toEqual({ encoding: 'GSM-7', segments: 1, units: 0 });
  });

  it('accepts the whole GSM 03.38 basic set at 1 septet each', () => {
    const basic =
      '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' +
      '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
    expect([...basic].length).toBe(127);
    expect(smsSegments(basic)).toEqual({ encoding: 'GSM-7', segments: 1, units: 127 });
  });

  it('counts every extension character as 2 septets', () => {
    for (const c of ['\f', '^', '{', '}', '\\', '[', '~', ']', '|', '€']) {
      expect(smsSegments(c), JSON.stringify(c)).toEqual({ encoding: 'GSM-7', segments: 1, units: 2 });
    }
  });

  it('switches to UCS-2 for characters outside GSM-7', () => {
    for (const c of ['`', 'ç', 'á', 'ñ'.normalize('NFD'), '—', '“', 'ж', '中', EMOJI]) {
      expect(isGsm7(c), JSON.stringify(c)).toBe(false);
      expect(smsSegments(`Hi ${c}`).encoding).toBe('UCS-2');
    }
    expect(smsSegments(`Hi ${EMOJI}`).units).toBe(5);
  });
});

describe('smsSegments: the ASCII shortcut', () => {
  it('answers what counting character by character answers, for every ASCII character and for mixed texts around the part limits', () => {
    const ascii = Array.from({ length: 128 }, (_, code) => String.fromCharCode(code));
    for (const c of ascii) expect(smsSegments(c), JSON.stringify(c)).toEqual(countedSegments(c));
    // Deterministic pseudo-random texts of ASCII plus a few extension and non-GSM characters,
    // at lengths around 153, 160, 306 and 459.
    let seed = 17;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    const plainPool = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,:;!?@$#%&\'"()*+-/<=>_\n\r'];
    const mixedPool = [...ascii.slice(32, 127), '\n', '\r', '€', 'é', EMOJI];
    for (const length of [0, 1, 70, 152, 153, 154, 159, 160, 161, 305, 306, 307, 459, 460]) {
      for (let n = 0; n < 40; n++) {
        const pool = n % 2 === 0 ? plainPool : mixedPool;
        const text = Array.from({ length }, () => pool[next() % pool.length]).join('');
        expect(smsSegments(text), JSON.stringify(text)).toEqual(countedSegments(text));
      }
    }
  });
});
