// Search attributes operators filter on in the Temporal UI. scripts/stack.sh registers the same names on the
// dev server; time-skipping tests register them with registerSearchAttributes (test/helpers/temporal.ts).
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const SA = {
  deliveryStatus: defineSearchAttributeKey('DeliveryStatus', SearchAttributeType.KEYWORD),
  endpointId: defineSearchAttributeKey('EndpointId', SearchAttributeType.KEYWORD),
  merchantAccount: defineSearchAttributeKey('MerchantAccount', SearchAttributeType.KEYWORD),
  eventType: defineSearchAttributeKey('EventType', SearchAttributeType.KEYWORD),
  reconciliationState: defineSearchAttributeKey('ReconciliationState', SearchAttributeType.KEYWORD),
  provider: defineSearchAttributeKey('Provider', SearchAttributeType.KEYWORD),
} as const;

export const SEARCH_ATTRIBUTE_NAMES = Object.values(SA).map((key) => key.name);
