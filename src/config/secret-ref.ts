// A30: `env:NAME` → the value of that environment variable, resolved when the profile is loaded so a missing secret
// stops the start (the idp block's console client secret; the same rule as the providers' secret_ref in profile.ts).
import { z } from 'zod';

export const envSecretRef = z.string().transform((ref, ctx) => {
  const match = /^env:([A-Z_][A-Z0-9_]*)$/.exec(ref);
  if (!match) {
    ctx.addIssue({ code: 'custom', message: `"${ref}" is not a secret reference (use env:NAME)` });
    return z.NEVER;
  }
  const value = process.env[match[1]!];
  if (!value) {
    ctx.addIssue({ code: 'custom', message: `environment variable ${match[1]} is not set` });
    return z.NEVER;
  }
  return value;
});
