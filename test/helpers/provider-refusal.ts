// I1, I15: the reason a provider adapter refused a webhook with (SignatureError or PayloadError), for the adapters'
// tables of hostile inputs; undefined when it accepted, "unexpected …" for any other error (a test then fails).
import { PayloadError, SignatureError } from '../../src/providers/types.js';

export function reasonOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (error) {
    return error instanceof SignatureError || error instanceof PayloadError ? error.reason : `unexpected ${String(error)}`;
  }
}
