// A25: prints how to sign in as each demo person of the stack's Keycloak realm (scripts/stack/keycloak-realm.json):
// username, password, groups and, for those who move money, the TOTP secret in base32 (what an authenticator app
// takes; `otpauth://` URI beside it). The demo realm's passwords and secrets are public by design: local use only.
/* global TextEncoder */
import { readFileSync } from 'node:fs';

const [file, issuer] = process.argv.slice(2);
const realm = JSON.parse(readFileSync(file, 'utf8'));

/** RFC 4648 base32 (no padding) of the secret's bytes, as Keycloak's QR code carries it. */
function base32(bytes) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}

console.log(`    Sign-in       ${issuer}  (Keycloak admin console: .data/keycloak/admin.pw, user admin)`);
for (const user of realm.users) {
  const password = user.credentials.find((c) => c.type === 'password')?.value;
  const otp = user.credentials.find((c) => c.type === 'otp');
  const secret = otp ? base32(new TextEncoder().encode(JSON.parse(otp.secretData).value)) : null;
  const groups = user.groups.map((g) => g.replace(/^\//, '')).join(',');
  const line = `      ${user.username.padEnd(6)} ${String(password).padEnd(13)} ${groups.padEnd(17)}`;
  console.log(
    secret
      ? `${line} TOTP ${secret}  (otpauth://totp/ApiPay:${user.username}?secret=${secret}&issuer=ApiPay)`
      : `${line} no second factor`,
  );
}
