import { describe, expect, it } from 'vitest';
import type { ChargeRequest, PriceEntry, PricedOffer } from '../../../../shared/api/index.ts';
import {
  chargeFor,
  describePriceEntry,
  megapixels,
  PriceEntry as PriceEntrySchema,
  requestAudio,
  tokenCharge,
} from '../../../../shared/api/index.ts';

/** fal's Veo 3: $0.20/s silent, $0.40/s with sound, at either resolution. */
const VEO: PricedOffer = {
  price: 0.4,
  prices: [
    { unit: 'second', usd: 0.2, audio: false },
    { unit: 'second', usd: 0.4, audio: true },
  ],
};
/** By resolution and sound: the most specific line wins. */
const BY_SIZE: PricedOffer = {
  price: 0.4,
  prices: [
    { unit: 'second', usd: 0.1 },
    { unit: 'second', usd: 0.2, size: '720p' },
    { unit: 'second', usd: 0.4, size: '1080p' },
    { unit: 'second', usd: 0.5, size: '1080p', audio: true },
  ],
};
/** Per video, fixed durations (Luma's Ray 2: $0.71 per 5 s, $1.27 per 9 s). */
const PER_VIDEO: PricedOffer = {
  price: 0.142,
  prices: [
    { unit: 'video', usd: 0.71, duration: 5 },
    { unit: 'video', usd: 1.27, duration: 9 },
  ],
};
const FLAT_VIDEO: PricedOffer = { price: 0.08, prices: [{ unit: 'video', usd: 0.4 }] };
/** Per image at a size (gpt-image-1 medium). */
const PER_IMAGE: PricedOffer = {
  price: 0.042,
  prices: [
    { unit: 'image', usd: 0.042, size: '1024x1024' },
    { unit: 'image', usd: 0.063, size: '1536x1024' },
    { unit: 'image', usd: 0.063, size: '1024x1536' },
  ],
};
/** Per megapixel (fal's FLUX.1 [dev]: $0.025/MP). */
const PER_MP: PricedOffer = { price: 0.025, prices: [{ unit: 'megapixel', usd: 0.025 }] };
const NO_TABLE: PricedOffer = { price: 0.05 };

const video = (r: Partial<ChargeRequest>): ChargeRequest => ({ media: 'video', size: '1080p', duration: 8, ...r });
const image = (r: Partial<ChargeRequest>): ChargeRequest => ({ media: 'image', size: '1024x1024', ...r });

describe('chargeFor', () => {
  const cases: Array<[string, PricedOffer, ChargeRequest, number, PriceEntry | null]> = [
    // No table: the headline × seconds (video) or × n (images), exactly as before tables.
    ['no table, video: price × seconds', NO_TABLE, video({ duration: 5 }), 0.05 * 5, null],
    ['no table, images: price × n', { price: 0.04 }, image({ count: 3 }), 0.04 * 3, null],
    ['no table, empty list', { price: 0.04, prices: [] }, image({}), 0.04, null],
    // Sound.
    ['with sound: the audio line', VEO, video({ audio: true }), 0.4 * 8, VEO.prices![1]!],
    ['silent: the cheaper line', VEO, video({ audio: false }), 0.2 * 8, VEO.prices![0]!],
    ['sound unknown: priced with sound (never understated)', VEO, video({}), 0.4 * 8, VEO.prices![1]!],
    // Size.
    ['720p', BY_SIZE, video({ size: '720p', audio: false }), 0.2 * 8, BY_SIZE.prices![1]!],
    ['1080p silent', BY_SIZE, video({ audio: false }), 0.4 * 8, BY_SIZE.prices![2]!],
    ['1080p with sound: size and sound beat size alone', BY_SIZE, video({ audio: true }), 0.5 * 8, BY_SIZE.prices![3]!],
    [
      'size written otherwise still fits',
      BY_SIZE,
      video({ size: ' 720P ', audio: false }),
      0.2 * 8,
      BY_SIZE.prices![1]!,
    ],
    ['a size without a line: the line for any size', BY_SIZE, video({ size: '480p' }), 0.1 * 8, BY_SIZE.prices![0]!],
    // Per video: the line of the request's duration, never divided into seconds.
    ['per video, 5 s', PER_VIDEO, video({ size: '720p', duration: 5 }), 0.71, PER_VIDEO.prices![0]!],
    ['per video, 9 s', PER_VIDEO, video({ size: '720p', duration: 9 }), 1.27, PER_VIDEO.prices![1]!],
    ['per video, a duration without a line: headline', PER_VIDEO, video({ duration: 7 }), 0.142 * 7, null],
    ['per video, any duration', FLAT_VIDEO, video({ duration: 5 }), 0.4, FLAT_VIDEO.prices![0]!],
    ['per video × variations', FLAT_VIDEO, video({ duration: 5, count: 3 }), 1.2, FLAT_VIDEO.prices![0]!],
    // Per image at a size, × n.
    ['per image, square', PER_IMAGE, image({ count: 2 }), 0.042 * 2, PER_IMAGE.prices![0]!],
    ['per image, landscape', PER_IMAGE, image({ size: '1536x1024' }), 0.063, PER_IMAGE.prices![1]!],
    ['per image, a size without a line: headline', PER_IMAGE, image({ size: '512x512' }), 0.042, null],
    // Per megapixel: width × height / 1e6 × n.
    ['per megapixel, 1024x1024', PER_MP, image({}), 0.025 * 1.048576, PER_MP.prices![0]!],
    ['per megapixel × n', PER_MP, image({ size: '1344x768', count: 4 }), 0.025 * 1.032192 * 4, PER_MP.prices![0]!],
    [
      'per megapixel, pixels given',
      PER_MP,
      image({ size: 'square_hd', width: 2000, height: 1000 }),
      0.05,
      PER_MP.prices![0]!,
    ],
    ['per megapixel, a named video size', PER_MP, video({ size: '720p' }), 0.025 * 0.9216, PER_MP.prices![0]!],
    ['per megapixel, size unknown: headline', PER_MP, image({ size: 'square_hd' }), 0.025, null],
  ];
  it.each(cases)('%s', (_name, offer, request, usd, entry) => {
    const charge = chargeFor(offer, request);
    expect(charge.usd).toBeCloseTo(usd, 10);
    expect(charge.entry).toBe(entry);
    expect(charge.unitUsd * charge.count).toBeCloseTo(charge.usd, 12);
  });

  it('keeps the old arithmetic exactly for an offer without a table', () => {
    // The same floating-point product as price × seconds: charges of old rows stay equal.
    expect(chargeFor({ price: 0.045 }, video({ duration: 6 })).usd).toBe(0.045 * 6);
    expect(chargeFor({ price: 0.045 }, video({ duration: 6 })).unitUsd).toBe(0.045 * 6);
  });

  it('counts one item when n is absent or not positive', () => {
    expect(chargeFor(NO_TABLE, image({ count: 0 })).count).toBe(1);
    expect(chargeFor(NO_TABLE, image({})).count).toBe(1);
  });

  it('takes the first of equally specific lines', () => {
    const offer: PricedOffer = {
      price: 1,
      prices: [
        { unit: 'second', usd: 0.3 },
        { unit: 'second', usd: 0.9 },
      ],
    };
    expect(chargeFor(offer, video({})).usd).toBeCloseTo(2.4, 10);
  });

  it('each table line parses as a PriceEntry', () => {
    for (const offer of [VEO, BY_SIZE, PER_VIDEO, FLAT_VIDEO, PER_IMAGE, PER_MP])
      for (const line of offer.prices ?? []) expect(PriceEntrySchema.parse(line)).toEqual(line);
  });
});

describe('requestAudio', () => {
  it.each<[unknown, { default?: unknown } | undefined, boolean | undefined]>([
    [true, undefined, true],
    [false, { default: true }, false],
    [undefined, { default: true }, true],
    [undefined, { default: false }, false],
    [undefined, undefined, undefined],
    ['yes', { default: 'yes' }, undefined],
  ])('%s with default %j → %s', (value, rule, expected) => {
    expect(requestAudio(value, rule)).toBe(expected);
  });
});

describe('megapixels', () => {
  it.each<[Parameters<typeof megapixels>[0], number | undefined]>([
    [{ size: '1024x1024' }, 1.048576],
    [{ size: '1080p' }, 2.0736],
    [{ size: 'x', width: 1000, height: 1000 }, 1],
    [{ size: 'landscape_4_3' }, undefined],
    [{}, undefined],
  ])('%j → %s', (request, mp) => {
    expect(megapixels(request)).toBe(mp);
  });
});

describe('describePriceEntry', () => {
  const usd = (v: number) => `$${v.toFixed(2)}`;
  it.each<[PriceEntry, string]>([
    [{ unit: 'second', usd: 0.4, size: '1080p', audio: true }, '1080p with sound $0.40/s'],
    [{ unit: 'second', usd: 0.2, audio: false }, 'silent $0.20/s'],
    [{ unit: 'video', usd: 1.4, duration: 5 }, '$1.40 per 5 s video'],
    [{ unit: 'video', usd: 0.4 }, '$0.40 per video'],
    [{ unit: 'image', usd: 0.06, size: '1536x1024' }, '1536x1024 $0.06/image'],
    [{ unit: 'megapixel', usd: 0.03 }, '$0.03/MP'],
  ])('%j → %s', (entry, words) => {
    expect(describePriceEntry(entry, usd)).toBe(words);
  });
});

describe('the units providers charge by', () => {
  const BLOCK: PricedOffer = {
    price: 0.1,
    prices: [{ unit: 'block', usd: 0.5, blockSeconds: 5, sizeMultipliers: { '540p': 1, '720P': 2 } }],
  };
  const BASE: PricedOffer = {
    price: 0.056,
    prices: [{ unit: 'video', usd: 0.28, duration: 5, extraSecondUsd: 0.056 }],
  };
  const WHOLE_MP: PricedOffer = { price: 0.05, prices: [{ unit: 'megapixel', usd: 0.025, rounding: 'up' }] };

  it.each<[string, PricedOffer, ChargeRequest, number]>([
    ['a started block is charged whole', BLOCK, video({ size: '540p', duration: 6 }), 1],
    ['an exact number of blocks', BLOCK, video({ size: '540p', duration: 10 }), 1],
    ['a block at least', BLOCK, video({ size: '540p', duration: 0 }), 0.5],
    ['× the size multiplier, whatever its case', BLOCK, video({ size: '720p', duration: 9 }), 2],
    ['a size the multipliers do not name: × 1', BLOCK, video({ size: '1080p', duration: 5 }), 0.5],
    ['the base for its seconds', BASE, video({ duration: 5 }), 0.28],
    ['the base plus a rate per further second', BASE, video({ duration: 10 }), 0.56],
    ['shorter than the base: the base', BASE, video({ duration: 3 }), 0.28],
    ['whole megapixels, rounded up: 512x512 is one', WHOLE_MP, image({ size: '512x512' }), 0.025],
    ['exactly two whole megapixels stay two', WHOLE_MP, image({ size: 'x', width: 2048, height: 1024 }), 0.05],
    ['one pixel column more is three', WHOLE_MP, image({ size: 'x', width: 2049, height: 1024 }), 0.075],
    ['1024x1024 is one', WHOLE_MP, image({ size: '1024x1024' }), 0.025],
    ['1920x1080 is two', WHOLE_MP, image({ size: '1920x1080', count: 2 }), 0.1],
  ])('%s', (_name, offer, request, usd) => {
    expect(chargeFor(offer, request).usd).toBe(usd);
  });

  it('a base line fits any duration, so it is not beaten by a line for any size', () => {
    const offer: PricedOffer = { price: 1, prices: [...BASE.prices!, { unit: 'second', usd: 1, size: '1080p' }] };
    expect(chargeFor(offer, video({ size: '720p', duration: 10 })).entry).toBe(BASE.prices![0]);
  });

  it('token lines never price a request ahead of the answer', () => {
    const offer: PricedOffer = { price: 0.042, prices: [{ unit: 'token', usd: 0.00004, token: 'output_image' }] };
    expect(chargeFor(offer, image({})).entry).toBeNull();
    expect(chargeFor(offer, image({})).usd).toBe(0.042);
  });
});

describe('tokenCharge', () => {
  const RATES: PriceEntry[] = [
    { unit: 'token', usd: 0.000005, token: 'input_text' },
    { unit: 'token', usd: 0.00001, token: 'input_image' },
    { unit: 'token', usd: 0.00004, token: 'output_image' },
    { unit: 'token', usd: 0.00001, token: 'output_text' },
    { unit: 'image', usd: 0.042 },
  ];

  it('prices each kind at its own line', () => {
    expect(tokenCharge(RATES, { input_text: 100, input_image: 200, output_image: 1000, output_text: 500 })).toBe(
      0.0005 + 0.002 + 0.04 + 0.005,
    );
  });

  it('a kind without a line: the dearest line of its direction, never below what the page lists', () => {
    const noTextOut = RATES.filter((r) => r.token !== 'output_text');
    expect(tokenCharge(noTextOut, { output_text: 1000 })).toBe(0.04);
  });

  it('no token lines: undefined (the catalog price applies)', () => {
    expect(tokenCharge([{ unit: 'image', usd: 0.042 }], { output_image: 10 })).toBeUndefined();
    expect(tokenCharge(undefined, { output_image: 10 })).toBeUndefined();
  });
});

describe('describePriceEntry, the new units', () => {
  const usd = (v: number) => `$${v.toFixed(3)}`;
  it.each<[PriceEntry, string]>([
    [{ unit: 'video', usd: 0.28, duration: 5, extraSecondUsd: 0.056 }, '$0.280 per 5 s video + $0.056/s after'],
    [
      { unit: 'block', usd: 0.5, blockSeconds: 5, sizeMultipliers: { '540p': 1, '720p': 2 } },
      '$0.500 per 5 s (720p ×2)',
    ],
    [{ unit: 'megapixel', usd: 0.025, rounding: 'up' }, '$0.025/MP (whole MP, rounded up)'],
    [{ unit: 'token', usd: 0.00004, token: 'output_image' }, '$40.000 per 1M output_image tokens'],
  ])('%j → %s', (entry, words) => {
    expect(describePriceEntry(entry, usd)).toBe(words);
  });
});
