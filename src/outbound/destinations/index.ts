// M11: the destination types other than http, by name, and the checks that span fields (a SASL mechanism needs its
// user and password). What each surface shows and validates comes from these descriptions (./fields.ts).
import type { DestinationType } from '../../shared/outbound.js';
import { DestinationInvalidError, parseDestination, type DestinationDescription, type ParsedDestination } from './fields.js';
import { kafkaDestination } from './kafka.js';
import { rabbitmqDestination } from './rabbitmq.js';

export { DestinationInvalidError, type DestinationDescription, type DestinationField, type ParsedDestination } from './fields.js';

export const DESTINATIONS: Record<Exclude<DestinationType, 'http'>, DestinationDescription> = {
  rabbitmq: rabbitmqDestination,
  kafka: kafkaDestination,
};

/** Validates a destination of `type` (throws DestinationInvalidError listing every issue). */
export function validateDestination(
  type: Exclude<DestinationType, 'http'>,
  input: Record<string, unknown>,
  existing?: ParsedDestination,
): ParsedDestination {
  const parsed = parseDestination(DESTINATIONS[type], input, existing);
  if (type === 'kafka' && parsed.config.sasl_mechanism !== 'none') {
    const issues = [];
    if (!parsed.config.username)
      issues.push({ field: 'username', message: `required with sasl_mechanism ${parsed.config.sasl_mechanism}` });
    if (!parsed.credentials.password)
      issues.push({ field: 'password', message: `required with sasl_mechanism ${parsed.config.sasl_mechanism}` });
    if (issues.length) throw new DestinationInvalidError(issues);
  }
  return parsed;
}

/** The url column of an endpoint of this destination. */
export const locatorOf = (type: Exclude<DestinationType, 'http'>, config: Record<string, string>): string =>
  DESTINATIONS[type].locator(config);

/** True for a url column written by a broker destination (the sender sends those through ./publish.ts). */
export const isBrokerLocator = (url: string): boolean => /^(amqps?|kafka):\/\//.test(url);
