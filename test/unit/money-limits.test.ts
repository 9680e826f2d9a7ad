// A22 limits fail closed: a production profile without any dual-control limit is refused (one message naming the
// key and the fix), the shipped profiles carry a default, and the default is in major units scaled by each
// currency's ISO 4217 exponent (fast-check: scaling keeps the major amount, rounds down, never grows a limit).
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseProfile, ProfileError } from '../../src/config/profile.js';
import { limitFor, limitsOf } from '../../src/ledger/money-policy.js';
import { minorToDecimal } from '../../src/inbound/csv.js';
import { currencyExponent, majorToMinor, rescaleMinor } from '../../src/shared/currency.js';

const example = () => parse(readFileSync('config/example.yaml', 'utf8')) as Record<string, any>;
const withSecrets = <T>(run: () => T): T => {
  const saved = { ...process.env };
  process.env.SANDBOX_STRIPE_WEBHOOK_SECRET ??= 'whsec_limits_test';
  process.env.SANDBOX_HMAC_WEBHOOK_SECRET ??= 'limits-test-hmac-secret';
  try {
    return run();
  } finally {
    process.env = saved;
  }
};
const CURRENCIES = ['EUR', 'USD', 'GBP', 'JPY', 'KRW', 'CLP', 'KWD', 'BHD', 'TND', 'CHF'];

describe('A22 limits fail closed', () => {
  it('A22 NODE_ENV=production refuses a profile with no per-currency limit and no default, naming the key and the fix', () => {
    const document = example();
    document.inbound.dual_control_above = {};
    delete document.inbound.dual_control_default_major;
    const production = () => withSecrets(() => parseProfile(document, 'profile p.yaml', { nodeEnv: 'production' }));
    expect(production).toThrow(ProfileError);
    expect(production).toThrow(
      /^invalid profile p\.yaml:\n {2}inbound\.dual_control_default_major: must be set when NODE_ENV=production .*e\.g\. dual_control_default_major: 1000$/,
    );
    // development and tests may run without limits; production with either a map or a default starts
    expect(
      withSecrets(() => parseProfile(document, 'profile p.yaml', { nodeEnv: 'development' })).inbound.dual_control_default_major,
    ).toBeUndefined();
    document.inbound.dual_control_above = { EUR: 100000 };
    expect(withSecrets(() => parseProfile(document, 'p', { nodeEnv: 'production' })).inbound.dual_control_above).toEqual({
      EUR: 100000n,
    });
    document.inbound.dual_control_above = {};
    document.inbound.dual_control_default_major = 1000;
    expect(withSecrets(() => parseProfile(document, 'p', { nodeEnv: 'production' })).inbound.dual_control_default_major).toBe(
      '1000',
    );
  });

  it('A22 the example profile and the Helm chart ship a default limit that a production process accepts', () => {
    const profile = withSecrets(() => parseProfile(example(), 'config/example.yaml', { nodeEnv: 'production' }));
    expect(profile.inbound.dual_control_default_major).toBe('1000');
    const values = parse(readFileSync('deploy/helm/apipay/values.yaml', 'utf8')) as {
      profile: { inbound: Record<string, unknown> };
    };
    expect(values.profile.inbound.dual_control_default_major).toBe(1000);
    expect(limitFor(limitsOf(profile.inbound), 'EUR')).toBe(100000n);
  });

  it('A22 the default is major units: 1000 is EUR 100000, JPY 1000, KWD 1000000 minor units; bad amounts are named', () => {
    const limits = { above: {}, defaultMajor: '1000' };
    expect(['EUR', 'JPY', 'KWD', 'CHF'].map((c) => limitFor(limits, c))).toEqual([100000n, 1000n, 1000000n, 100000n]);
    expect(majorToMinor('0.005', 'EUR')).toBe(0n); // rounded down: a limit never grows by rounding
    expect(majorToMinor('12.3456', 'KWD')).toBe(12345n);
    const document = example();
    for (const bad of [-1, '1e3', 'lots', Number.POSITIVE_INFINITY, '1.1234567']) {
      document.inbound.dual_control_default_major = bad;
      expect(() => withSecrets(() => parseProfile(document, 'p'))).toThrow(
        /inbound\.dual_control_default_major: must be a non-negative amount in major units/,
      );
    }
    delete document.inbound.dual_control_default_major;
    document.inbound.dual_control_default_above = 100000; // the old minor-unit key would silently mean 100x as much
    expect(() => withSecrets(() => parseProfile(document, 'p'))).toThrow(
      /inbound\.dual_control_default_above: .*use dual_control_default_major/,
    );
  });

  it('A22 without a default, the smallest named limit is compared and scaled in major units (not minor-unit numbers)', () => {
    // EUR 1,000.00 (100000 minor) is smaller than JPY 5,000 (5000 minor), although 5000 < 100000 in minor units;
    // KWD 2.000 (2000 minor) is smaller than JPY 1,000 (1000 minor): EUR gets 2.00.
    expect(limitFor({ above: { EUR: 100000n, JPY: 5000n }, defaultMajor: null }, 'USD')).toBe(100000n);
    expect(limitFor({ above: { KWD: 2000n, JPY: 1000n }, defaultMajor: null }, 'EUR')).toBe(200n);
  });

  it('A22 property: a default of M major units is M×10^exponent minor units and reads back as M in every currency', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.constantFrom(...CURRENCIES), (major, currency) => {
        const minor = limitFor({ above: {}, defaultMajor: major.toString() }, currency)!;
        expect(minor).toBe(major * 10n ** BigInt(currencyExponent(currency)));
        const decimal = minorToDecimal(minor, currency);
        expect(decimal.split('.')[0]).toBe(major.toString());
        expect(decimal.split('.')[1] ?? '').toMatch(/^0*$/);
      }),
      { seed: 8011, numRuns: 300 },
    );
  });

  it('A22 property: scaling between currencies rounds down, so no limit in any currency exceeds the named one in major units', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 15n }),
        fc.constantFrom(...CURRENCIES),
        fc.constantFrom(...CURRENCIES),
        (minor, from, to) => {
          const scaled = rescaleMinor(minor, from, to);
          const e = (c: string) => 10n ** BigInt(currencyExponent(c));
          // scaled / 10^e(to) <= minor / 10^e(from) < (scaled + 1) / 10^e(to)
          expect(scaled * e(from) <= minor * e(to)).toBe(true);
          expect((scaled + 1n) * e(from) > minor * e(to)).toBe(true);
          expect(limitFor({ above: { [from]: minor }, defaultMajor: null }, to)).toBe(from === to ? minor : scaled);
        },
      ),
      { seed: 8011, numRuns: 300 },
    );
  });
});
