// C9: the dates an operator types: a plain day `2026-12-01` (midnight UTC) or a full ISO 8601 date-time with
// an offset (`2026-12-01T09:30:00Z`, `…+01:00`). Shared by the CLI (checks before sending) and the admin API.
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

export const OPERATOR_DATE_HINT = 'must be a date (2026-12-01) or an ISO 8601 date-time with offset (2026-12-01T09:30:00Z)';

export function parseOperatorDate(text: string): Date | undefined {
  const day = DAY.exec(text);
  if (day) {
    const date = new Date(Date.UTC(Number(day[1]), Number(day[2]) - 1, Number(day[3])));
    // 2026-02-30 would roll over into March: refuse it rather than guess.
    return date.toISOString().startsWith(text) ? date : undefined;
  }
  if (!DATE_TIME.test(text)) return undefined;
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? undefined : date;
}
