// A3: what the audit writer keeps of before/after: never a secret, token, hash, ciphertext or raw body, whatever a
// caller passes; dates and bigints as JSON can hold them; an endpoint snapshot without the URL's password.
import { describe, expect, it } from 'vitest';
import { redact } from '../../src/audit/record.js';
import { endpointSnapshot } from '../../src/audit/snapshots.js';

describe('A3 audit before/after', () => {
  it('A3 drops secret-bearing keys at any depth and keeps the rest', () => {
    const input = {
      url: 'https://m.example/h',
      secret: 'whsec_x',
      signing_secret: 'whsec_y',
      token: 'apk_t',
      secretHash: 'h',
      ciphertext: 'c',
      body: '{"card":"4242"}',
      raw_body: 'b',
      response_excerpt: 'e',
      nested: [{ api_token: 'x', kept: 1 }],
      at: new Date('2026-12-01T00:00:00Z'),
      amount: 5n,
    };
    expect(redact(input)).toEqual({
      url: 'https://m.example/h',
      nested: [{ kept: 1 }],
      at: '2026-12-01T00:00:00.000Z',
      amount: '5',
    });
  });

  it('A3 an endpoint snapshot has every field but id and bookkeeping times, snake_case, the URL without its password', () => {
    const at = new Date('2026-12-01T00:00:00Z');
    const snapshot = endpointSnapshot({
      id: 'we_1',
      merchantAccount: 'acct_1',
      url: 'https://user:pw@m.example/h',
      description: null,
      eventTypes: ['*'],
      livemode: false,
      status: 'disabled',
      disabledReason: 'asked',
      disabledAt: at,
      failingSince: null,
      deletedAt: null,
      createdAt: at,
      updatedAt: at,
    } as Parameters<typeof endpointSnapshot>[0]);
    expect(snapshot).toMatchObject({
      merchant_account: 'acct_1',
      url: 'https://user@m.example/h',
      event_types: ['*'],
      status: 'disabled',
      disabled_at: at.toISOString(),
    });
    expect(snapshot).not.toHaveProperty('id');
    expect(snapshot).not.toHaveProperty('created_at');
    expect(JSON.stringify(snapshot)).not.toContain('pw');
  });
});
