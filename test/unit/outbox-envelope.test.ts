// M1: an outbox row becomes an ordinary Kafka envelope (O1) that the dispatcher accepts, with the merchant account
// from the row or, for ledger events, from the provider's profile entry; every field comes from the row.
import { describe, expect, it } from 'vitest';
import { parseEnvelope } from '../../src/outbound/envelope.js';
import { LEDGER_EVENT_TYPES, ledgerEventId } from '../../src/ledger/announce.js';
import { POSTING_KINDS } from '../../src/ledger/postings.js';
import { ledgerAccounts, outboxEnvelope } from '../../src/outbox/envelope.js';
import type { OutboxRow } from '../../src/outbox/store.js';
import { testProfile } from '../helpers/profile.js';

const row = (patch: Partial<OutboxRow> = {}): OutboxRow => ({
  id: 1,
  eventPublicId: ledgerEventId('ltx_01abc'),
  type: 'payment.settled',
  merchantAccount: null,
  provider: 'sandbox-stripe',
  livemode: null,
  data: { id: 'ltx_01abc', object: 'ledger_transaction', amount_minor: '1999', currency: 'EUR' },
  createdAt: new Date('2026-12-01T10:00:00Z'),
  publishedAt: null,
  traceparent: null,
  ...patch,
});

describe('M1 outbox envelopes', () => {
  it('M1 a ledger row maps its provider to the profile’s merchant_account and livemode, and the dispatcher accepts it', () => {
    const profile = testProfile({
      inbound: { providers: { 'sandbox-stripe': { merchant_account: 'acct_shop', livemode: true } } },
    });
    const { key, envelope } = outboxEnvelope(row(), ledgerAccounts(profile));
    expect(key).toBe('acct_shop');
    expect(envelope).toEqual({
      id: 'evt_ltx_01abc',
      object: 'event',
      type: 'payment.settled',
      created: Date.parse('2026-12-01T10:00:00Z') / 1000,
      livemode: true,
      data: { object: row().data },
      merchant_account: 'acct_shop',
    });
    const parsed = parseEnvelope(Buffer.from(JSON.stringify(envelope)));
    expect(parsed.ok && parsed.event).toMatchObject({
      eventPublicId: 'evt_ltx_01abc',
      merchantAccount: 'acct_shop',
      type: 'payment.settled',
      livemode: true,
    });
  });

  it('M1 without merchant_account a provider’s events belong to the account named like the provider; a row’s own account wins', () => {
    const accounts = ledgerAccounts(testProfile());
    expect(outboxEnvelope(row(), accounts).envelope).toMatchObject({ merchant_account: 'sandbox-stripe', livemode: false });
    expect(outboxEnvelope(row({ provider: 'gone-provider' }), accounts).envelope.merchant_account).toBe('gone-provider');
    const endpointRow = row({ provider: null, merchantAccount: 'acct_x', livemode: true, type: 'endpoint.disabled' });
    expect(outboxEnvelope(endpointRow, accounts)).toMatchObject({
      key: 'acct_x',
      envelope: { merchant_account: 'acct_x', livemode: true },
    });
  });

  it('M1 the same row gives the same message every time (a re-publish is a duplicate the dispatcher dedupes)', () => {
    const accounts = ledgerAccounts(testProfile());
    expect(JSON.stringify(outboxEnvelope(row(), accounts))).toBe(JSON.stringify(outboxEnvelope(row(), accounts)));
  });

  it('M1 every settled kind has a type; provisional credit (I12) announces nothing', () => {
    expect(POSTING_KINDS.filter((k) => LEDGER_EVENT_TYPES[k])).toEqual(['payment', 'refund', 'chargeback', 'reversal']);
    expect(LEDGER_EVENT_TYPES.adjustment).toBe('payment.adjusted');
  });
});
