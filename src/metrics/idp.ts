// A29: the identity provider as the API sees it: each failed fetch of its discovery document or JWKS (the requests
// refused meanwhile with 503 are not counted one by one; the verifier waits IDP_RETRY_SECONDS before asking again).
import { counter } from './registry.js';

export const idpUnreachable = counter(
  'apipay_idp_unreachable_total',
  "Failed fetches of the identity provider's discovery document or JWKS; bearer JWTs answer 503 meanwhile (A29)",
  [] as const,
);
