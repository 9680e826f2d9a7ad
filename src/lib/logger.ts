// The process logger (pino, JSON lines; LOG_FORMAT=pretty for human lines under `npm start`, C11). Secret-bearing fields are redacted wherever they appear, and a database
// error under `err` or `error` is logged as SQLSTATE, table, constraint and a short message, never its parameters (R1).
import { pino, type DestinationStream, type Logger } from 'pino';
import { logFormatOf, type LogFormat } from '../config/env.js';
import { safeError } from '../db/errors.js';
import { prettyDestination } from './pretty-log.js';

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

/**
 * `format`: a process that parsed its environment passes env.LOG_FORMAT; the others (the sandbox, the drill) read the
 * same variable through the same parser. Redaction and safe errors happen before either form is written.
 */
export function createLogger(
  name: string,
  level = process.env.LOG_LEVEL ?? 'info',
  destination?: DestinationStream,
  format: LogFormat = logFormatOf(process.env),
): Logger {
  const serializeError = (error: unknown) => pino.stdSerializers.err(safeError(error) as Error);
  const options = { name, level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, serializers: { err: serializeError, error: serializeError } };
  const out = destination ?? (format === 'pretty' ? prettyDestination() : undefined);
  return out ? pino(options, out) : pino(options);
}

export type { Logger };
