// O16/O17: Standard Webhooks signatures (the spec of the `standardwebhooks` libraries): headers webhook-id (the
// event id, the same on every retry), webhook-timestamp (unix s) and webhook-signature, a space-separated list of
// `v1,<base64 HMAC-SHA256>` with the base64-decoded part of a `whsec_…` secret as key and, for endpoints with an
// ed25519 key, `v1a,<base64 ed25519>` with a `whsk_…` signing key; both over `<id>.<timestamp>.<body>`. One entry
// per key while a rotation's grace period runs (O9).
import {
  createHmac,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign as edSign,
  timingSafeEqual,
  verify as edVerify,
  type KeyObject,
} from 'node:crypto';

export const STANDARD_HEADERS = { id: 'webhook-id', timestamp: 'webhook-timestamp', signature: 'webhook-signature' } as const;

const SECRET_PREFIX = 'whsec_';
const SIGNING_KEY_PREFIX = 'whsk_';
const PUBLIC_KEY_PREFIX = 'whpk_';
// DER prefixes that wrap a raw 32-byte ed25519 seed (PKCS#8) and public key (SPKI) for node:crypto.
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_ED25519 = Buffer.from('302a300506032b6570032100', 'hex');

/** The HMAC key of a whsec_ secret: the base64 after the prefix, decoded (as the reference libraries do). */
export function hmacKeyOf(secret: string): Buffer {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  if (key.length === 0) throw new Error('standard webhooks: the secret decodes to no bytes');
  return key;
}

/** A new ed25519 key pair: whsk_<base64 of the 32-byte seed>, whpk_<base64 of the 32-byte public key>. */
export function generateSigningKeyPair(): { signingKey: string; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const seed = privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(PKCS8_ED25519.length);
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(SPKI_ED25519.length);
  return {
    signingKey: `${SIGNING_KEY_PREFIX}${seed.toString('base64')}`,
    publicKey: `${PUBLIC_KEY_PREFIX}${raw.toString('base64')}`,
  };
}

function privateKeyOf(signingKey: string): KeyObject {
  if (!signingKey.startsWith(SIGNING_KEY_PREFIX)) throw new Error('standard webhooks: an ed25519 signing key starts with whsk_');
  const seed = Buffer.from(signingKey.slice(SIGNING_KEY_PREFIX.length), 'base64');
  if (seed.length !== 32) throw new Error('standard webhooks: a whsk_ key is 32 bytes, base64-encoded');
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: 'der', type: 'pkcs8' });
}

export function publicKeyObjectOf(publicKey: string): KeyObject {
  if (!publicKey.startsWith(PUBLIC_KEY_PREFIX)) throw new Error('standard webhooks: an ed25519 public key starts with whpk_');
  const raw = Buffer.from(publicKey.slice(PUBLIC_KEY_PREFIX.length), 'base64');
  if (raw.length !== 32) throw new Error('standard webhooks: a whpk_ key is 32 bytes, base64-encoded');
  return createPublicKey({ key: Buffer.concat([SPKI_ED25519, raw]), format: 'der', type: 'spki' });
}

/** The whpk_ public key of a whsk_ signing key (what the admin API, CLI and portal show). */
export function publicKeyOf(signingKey: string): string {
  const raw = createPublicKey(privateKeyOf(signingKey)).export({ format: 'der', type: 'spki' }).subarray(SPKI_ED25519.length);
  return `${PUBLIC_KEY_PREFIX}${raw.toString('base64')}`;
}

const signedContent = (id: string, timestamp: number, payload: Buffer) =>
  Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), payload]);

export interface StandardSignInput {
  id: string;
  timestamp: number;
  payload: Buffer;
  /** whsec_… secrets: the active one first, then those in their grace period. */
  secrets: string[];
  /** whsk_… ed25519 signing keys, same order; none for an HMAC-only endpoint. */
  signingKeys?: string[];
}

/** The three Standard Webhooks headers for one payload. */
export function signStandard(input: StandardSignInput): Record<string, string> {
  if (input.secrets.length === 0 && (input.signingKeys ?? []).length === 0)
    throw new Error('signStandard: at least one secret or signing key is required');
  if (!Number.isInteger(input.timestamp) || input.timestamp < 0) throw new Error('signStandard: timestamp must be unix seconds');
  if (!/^[^\s.]+$/.test(input.id)) throw new Error('signStandard: the id must be non-empty, without spaces or dots');
  const content = signedContent(input.id, input.timestamp, input.payload);
  const entries = [
    ...input.secrets.map((secret) => `v1,${createHmac('sha256', hmacKeyOf(secret)).update(content).digest('base64')}`),
    ...(input.signingKeys ?? []).map((key) => `v1a,${edSign(null, content, privateKeyOf(key)).toString('base64')}`),
  ];
  return {
    [STANDARD_HEADERS.id]: input.id,
    [STANDARD_HEADERS.timestamp]: String(input.timestamp),
    [STANDARD_HEADERS.signature]: entries.join(' '),
  };
}

/** The entries of a webhook-signature header: version and decoded signature; malformed entries are dropped. */
export function parseStandardSignature(header: string): { version: string; signature: Buffer }[] {
  const out: { version: string; signature: Buffer }[] = [];
  for (const entry of header.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma <= 0) continue;
    const signature = Buffer.from(entry.slice(comma + 1), 'base64');
    if (signature.length > 0) out.push({ version: entry.slice(0, comma), signature });
  }
  return out;
}

/** True when one v1 entry matches one secret, or one v1a entry one whpk_ public key; every pair is compared. */
export function matchesStandard(id: string, timestamp: number, payload: Buffer, header: string, keys: string[]): boolean {
  const content = signedContent(id, timestamp, payload);
  const entries = parseStandardSignature(header);
  let matched = false;
  for (const key of keys) {
    if (key.startsWith(PUBLIC_KEY_PREFIX)) {
      const publicKey = publicKeyObjectOf(key);
      for (const entry of entries)
        if (entry.version === 'v1a' && entry.signature.length === 64 && edVerify(null, content, publicKey, entry.signature))
          matched = true;
    } else {
      const expected = createHmac('sha256', hmacKeyOf(key)).update(content).digest();
      for (const entry of entries)
        if (entry.version === 'v1' && entry.signature.length === expected.length && timingSafeEqual(expected, entry.signature))
          matched = true;
    }
  }
  return matched;
}
