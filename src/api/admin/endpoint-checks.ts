// The checks an endpoint's target passes before it is stored, shared by the admin routes
// (src/api/admin/webhook-endpoints.ts) and the console's and portal's endpoint form (src/api/console/endpoint-form.ts):
// O15's address policy on an http URL and on each host a broker destination names (M11), and a destination's
// field issues as a 400 naming `destination.<field>`. Messages name fields and reasons, never a secret's value.
import { checkEndpointUrl, UnsafeUrlError } from '../../outbound/url-safety.js';
import { DestinationInvalidError } from '../../outbound/destinations/index.js';
import { ApiError } from '../errors.js';

export interface TargetPolicy {
  allowInsecure: boolean;
}

/** O15 at registration and update; a refusal is a 400 that names `url`. */
export async function checkUrl(value: string, policy: TargetPolicy): Promise<void> {
  try {
    await checkEndpointUrl(value, { allowInsecure: policy.allowInsecure });
  } catch (error) {
    if (!(error instanceof UnsafeUrlError)) throw error;
    throw new ApiError('validation_failed', `url: ${error.message}`, {
      issues: [{ field: 'url', message: error.message, reason: error.reason }],
    });
  }
}

/** O15 for a broker destination: each host the fields name passes the same policy as a URL's. */
export async function checkBrokerHosts(fields: Record<string, string> | undefined, policy: TargetPolicy): Promise<void> {
  const hosts = [fields?.host ? `${fields.host}:${fields.port ?? 5672}` : null, ...(fields?.brokers ?? '').split(',')].filter(
    (h): h is string => !!h && h.trim() !== '',
  );
  for (const host of hosts) {
    try {
      await checkEndpointUrl(`https://${host.trim()}/`, { allowInsecure: policy.allowInsecure });
    } catch (error) {
      if (!(error instanceof UnsafeUrlError)) continue; // a malformed host is the description's to report
      throw new ApiError('validation_failed', `destination: ${error.message}`, {
        issues: [{ field: 'destination', message: error.message, reason: error.reason }],
      });
    }
  }
}

/** M11: a destination's field issues as the API's 400; anything else goes on. */
export function destinationRefusal(error: unknown): never {
  if (error instanceof DestinationInvalidError) {
    const issues = error.issues.map((i) => ({ field: `destination.${i.field}`, message: i.message }));
    throw new ApiError('validation_failed', issues.map((i) => `${i.field}: ${i.message}`).join('; '), { issues });
  }
  throw error;
}

/** A merchant key registers endpoints of its own account only; another account does not exist for it (A1). */
export function ownAccount(scope: string | undefined, account: string): void {
  if (scope !== undefined && scope !== account) throw new ApiError('not_found', `merchant account ${account} does not exist`);
}
