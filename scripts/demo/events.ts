// The events the outbound demo publishes (M8): only catalog types, each data.object valid against its schema
// (test/unit/catalog.test.ts checks a run of them). `sequence` drives the demo receiver's failures; the schemas
// allow extra properties, as every catalog schema does.
export const DEMO_TYPES = ['payment.succeeded', 'payment.failed', 'refund.created'] as const;
export type DemoType = (typeof DEMO_TYPES)[number];

export function demoObject(type: DemoType, sequence: number): Record<string, unknown> {
  if (type === 'refund.created')
    return {
      id: `re_demo_${sequence}`,
      object: 'refund',
      amount: 500 + sequence,
      currency: 'eur',
      status: 'pending',
      payment: `pay_demo_${sequence - 2}`,
      sequence,
    };
  const status = type === 'payment.failed' ? 'failed' : 'succeeded';
  return {
    id: `pay_demo_${sequence}`,
    object: 'payment',
    amount: 1000 + sequence,
    currency: 'eur',
    status,
    ...(type === 'payment.failed' ? { failure_code: 'card_declined' } : {}),
    sequence,
  };
}
