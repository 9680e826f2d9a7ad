// The process logger (pino, JSON lines). Secret-bearing fields are redacted wherever they appear, and a database
// error under `err` or `error` is logged as SQLSTATE, table, constraint and a short message, never its parameters (R1).
import { pino, type DestinationStream, type Logger } from 'pino';
import { safeError } from '../db/errors.js';

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
  const serializeError = (error: unknown) => pino.stdSerializers.err(safeError(error) as Error);
  const options = { name, level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, serializers: { err: serializeError, error: serializeError } };
  return destination ? pino(options, destination) : pino(options);
}

export type { Logger };
