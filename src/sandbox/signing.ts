// The provider side of the two signature schemes: how the sandbox (and tests) sign what they send to the ingress.
import { createHmac } from 'node:crypto';

/** `t=<t>,v1=<hex>` for each secret: a provider rotating its secret signs with both for a while. */
export function stripeSignatureHeader(body: string | Buffer, secrets: string | string[], timestampSeconds: number): string {
  const list = Array.isArray(secrets) ? secrets : [secrets];
  const v1 = list.map((secret) => `v1=${createHmac('sha256', secret).update(`${timestampSeconds}.`).update(body).digest('hex')}`);
  return [`t=${timestampSeconds}`, ...v1].join(',');
}

export function hmacSignature(body: string | Buffer, secret: string, encoding: 'hex' | 'base64'): string {
  return createHmac('sha256', secret).update(body).digest(encoding);
}
