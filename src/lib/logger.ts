// The process logger (pino, JSON lines). Secret-bearing fields are redacted wherever they appear.
import { pino, type DestinationStream, type Logger } from 'pino';

export const REDACT_PATHS = [
  'secret',
  '*.secret',
  'secrets',
  '*.secrets',
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'token',
  '*.token',
  'ADMIN_TOKEN',
  'SECRETS_ENCRYPTION_KEY',
];

export function createLogger(name: string, level = process.env.LOG_LEVEL ?? 'info', destination?: DestinationStream): Logger {
  const options = { name, level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}

export type { Logger };
