// C9: the dates an operator types: a plain day `2026-12-01` (midnight UTC) or a full ISO 8601 date-time with
// an offset (`2026-12-01T09:30:00Z`, `…+01:00`). Shared by the CLI (checks before sending) and the admin API.
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

export const OPERATOR_DATE_HINT =
  'must be a date (2026-12-01) or an ISO 8601 date-time with offset (2026-12-01T09:30:00Z), between 0001 and 9999';

/** R21: the instants both PostgreSQL's timestamptz and a four-digit ISO 8601 year hold, 0001-01-01 to 9999-12-31 (UTC). */
export const EARLIEST_INSTANT_MS = -62_135_596_800_000;
export const LATEST_INSTANT_MS = 253_402_300_799_999;
export const storableInstant = (ms: number): boolean =>
  Number.isFinite(ms) && ms >= EARLIEST_INSTANT_MS && ms <= LATEST_INSTANT_MS;

export function parseOperatorDate(text: string): Date | undefined {
  const day = DAY.exec(text);
  if (day) {
    const date = new Date(Date.UTC(Number(day[1]), Number(day[2]) - 1, Number(day[3])));
    // 2026-02-30 would roll over into March: refuse it rather than guess.
    const year = Number(day[1]);
    date.setUTCFullYear(year, Number(day[2]) - 1, Number(day[3])); // Date.UTC reads years 0-99 as 1900-1999
    return storableInstant(date.getTime()) && date.toISOString().startsWith(text) ? date : undefined;
  }
  if (!DATE_TIME.test(text)) return undefined;
  const date = new Date(text);
  return storableInstant(date.getTime()) ? date : undefined;
}
