// The events the outbound demo publishes (M8): only catalog types, each data.object valid against its schema
// (test/unit/catalog.test.ts checks a run of them) and typed by the catalog's generated types (M10). `sequence`
// drives the demo receiver's failures; the schemas allow extra properties, as every catalog schema does.
import type { CatalogEnvelope, CatalogObjects, CatalogType } from '../../src/catalog/types.generated.js';

export const DEMO_TYPES = ['payment.succeeded', 'payment.failed', 'refund.created'] as const satisfies readonly CatalogType[];
export type DemoType = (typeof DEMO_TYPES)[number];

/** The data.object of a demo event (src/catalog/types.generated.ts). */
export function demoObject<T extends DemoType>(type: T, sequence: number): CatalogObjects[T] {
  const objects: { [K in DemoType]: () => CatalogObjects[K] } = {
    'payment.succeeded': () => ({
      id: `pay_demo_${sequence}`,
      object: 'payment',
      amount: 1000 + sequence,
      currency: 'eur',
      status: 'succeeded',
      sequence,
    }),
    'payment.failed': () => ({
      id: `pay_demo_${sequence}`,
      object: 'payment',
      amount: 1000 + sequence,
      currency: 'eur',
      status: 'failed',
      failure_code: 'card_declined',
      sequence,
    }),
    'refund.created': () => ({
      id: `re_demo_${sequence}`,
      object: 'refund',
      amount: 500 + sequence,
      currency: 'eur',
      status: 'pending',
      payment: `pay_demo_${sequence - 2}`,
      sequence,
    }),
  };
  return objects[type]();
}

/** A whole envelope, as the demo publishes it to the outbound topic (O1). */
export function demoEnvelope<T extends DemoType>(
  type: T,
  sequence: number,
  id: string,
  merchantAccount: string,
): CatalogEnvelope<T> {
  return {
    id,
    object: 'event',
    type,
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    merchant_account: merchantAccount,
    data: { object: demoObject(type, sequence) },
  };
}
