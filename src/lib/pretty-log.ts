// C11: the human form of the log lines (LOG_FORMAT=pretty, which `npm start` sets): pino writes its JSON line, already
// redacted (REDACT_PATHS) and with errors made safe, and this turns it into one line a person reads:
// `12:18:07.123 INFO  api  webhook accepted  provider=stripe status=202`. JSON stays the default, and production's
// (src/config/env.ts refuses pretty there).
import type { DestinationStream } from 'pino';

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO ', 40: 'WARN ', 50: 'ERROR', 60: 'FATAL' };
/** Fields every line has, shown in the line's head rather than as key=value. */
const HEAD = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg']);

const value = (v: unknown): string => {
  if (typeof v === 'string') return /[\s"=]/.test(v) || v === '' ? JSON.stringify(v) : v;
  if (v === null || typeof v !== 'object') return String(v);
  return JSON.stringify(v);
};

/** One JSON log line as one human line (a line that is not JSON is passed through as it came). */
export function prettyLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const time = typeof entry.time === 'number' ? new Date(entry.time).toISOString().slice(11, 23) : '';
  const level = LEVELS[entry.level as number] ?? String(entry.level);
  const fields = Object.entries(entry)
    .filter(([k, v]) => !HEAD.has(k) && v !== undefined)
    .map(([k, v]) => {
      if ((k === 'err' || k === 'error') && v && typeof v === 'object') {
        const e = v as { type?: string; message?: string; code?: string };
        return `${k}=${value([e.type, e.code, e.message].filter(Boolean).join(': '))}`;
      }
      return `${k}=${value(v)}`;
    });
  return `${time} ${level} ${String(entry.name ?? '')}  ${String(entry.msg ?? '')}${fields.length ? `  ${fields.join(' ')}` : ''}\n`;
}

/** A pino destination that writes each line in its human form to `out` (stdout by default). */
export function prettyDestination(out: { write(text: string): unknown } = process.stdout): DestinationStream {
  return { write: (line: string) => void out.write(prettyLine(line.trimEnd())) };
}
