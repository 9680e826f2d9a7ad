// Search attributes operators filter on in the Temporal UI: the one list. The dev server (scripts/stack.sh) and the
// compose file register them from scripts/stack/search-attributes.txt, generated from here (a unit test fails when
// it drifts); time-skipping tests register them with registerSearchAttributes (test/helpers/temporal.ts).
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const SA = {
  deliveryStatus: defineSearchAttributeKey('DeliveryStatus', SearchAttributeType.KEYWORD),
  endpointId: defineSearchAttributeKey('EndpointId', SearchAttributeType.KEYWORD),
  merchantAccount: defineSearchAttributeKey('MerchantAccount', SearchAttributeType.KEYWORD),
  eventType: defineSearchAttributeKey('EventType', SearchAttributeType.KEYWORD),
  reconciliationState: defineSearchAttributeKey('ReconciliationState', SearchAttributeType.KEYWORD),
  provider: defineSearchAttributeKey('Provider', SearchAttributeType.KEYWORD),
  /** O20: the payment a reconciliation or a delivery is about (set at start when known). */
  paymentReference: defineSearchAttributeKey('PaymentReference', SearchAttributeType.KEYWORD),
} as const;

export const SEARCH_ATTRIBUTE_NAMES = Object.values(SA).map((key) => key.name);

/** The type names the `temporal` CLI takes (`--search-attribute Name=Keyword`, `--type Keyword`). */
const CLI_TYPES: Record<SearchAttributeType, string> = {
  TEXT: 'Text',
  KEYWORD: 'Keyword',
  INT: 'Int',
  DOUBLE: 'Double',
  BOOL: 'Bool',
  DATETIME: 'Datetime',
  KEYWORD_LIST: 'KeywordList',
};

/** One `Name=Type` line per attribute: the content of scripts/stack/search-attributes.txt. */
export function searchAttributeRegistrations(): string {
  return Object.values(SA)
    .map((key) => `${key.name}=${CLI_TYPES[key.type]}\n`)
    .join('');
}
