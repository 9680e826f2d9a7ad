// M1: the Kafka envelope (O1) of an outbox row. Everything in it comes from the row, so a re-publish after a crash
// is the same message with the same evt_ id, which the dispatcher dedupes (O3).
import type { Profile } from '../config/profile.js';
import type { OutboxRow } from './store.js';

export interface LedgerAccount {
  merchantAccount: string;
  livemode: boolean;
}

/** M1: a provider's ledger events belong to the profile's `merchant_account` of that provider (default: its name). */
export function ledgerAccounts(profile: Profile): (provider: string) => LedgerAccount {
  return (provider) => {
    const config = Object.hasOwn(profile.inbound.providers, provider) ? profile.inbound.providers[provider] : undefined;
    return { merchantAccount: config?.merchant_account ?? provider, livemode: config?.livemode ?? false };
  };
}

export function outboxEnvelope(row: OutboxRow, accountOf: (provider: string) => LedgerAccount) {
  const mapped = row.provider !== null ? accountOf(row.provider) : undefined;
  const merchantAccount = row.merchantAccount ?? mapped!.merchantAccount;
  return {
    key: merchantAccount,
    envelope: {
      id: row.eventPublicId,
      object: 'event' as const,
      type: row.type,
      created: Math.floor(row.createdAt.getTime() / 1000),
      livemode: row.livemode ?? mapped?.livemode ?? false,
      data: { object: row.data },
      merchant_account: merchantAccount,
    },
  };
}
