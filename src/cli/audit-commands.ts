// The CLI's audit commands (A3): `apipay audit list`, the audit log filtered by actor, action, target and time,
// as JSON pages or (--csv) every matching row as CSV.
import { cursorPage, date, oneOf, optional, str, UsageError, type Command } from './command-args.js';

export const AUDIT_COMMANDS: Command[] = [
  {
    words: ['audit', 'list'],
    options: {
      actor: str,
      action: str,
      'target-type': str,
      'target-id': str,
      since: str,
      until: str,
      order: str,
      csv: { type: 'boolean' },
      ...cursorPage,
    },
    summary:
      '[--actor KEY_ID|NAME] [--action endpoint.update] [--target-type T --target-id ID] [--since DATE] [--until DATE] [--order asc|desc] [--limit N] [--cursor C] [--csv]',
    build: (v) => {
      const filters = {
        actor: optional(v, 'actor'),
        action: optional(v, 'action'),
        target_type: optional(v, 'target-type'),
        target_id: optional(v, 'target-id'),
        order: oneOf(v, 'order', ['asc', 'desc']),
        from: date(v, 'since'),
        to: date(v, 'until'),
      };
      if (v.csv !== true)
        return {
          method: 'GET',
          path: '/audit-events',
          query: { ...filters, cursor: optional(v, 'cursor'), limit: optional(v, 'limit') },
        };
      if (v.cursor !== undefined || v.limit !== undefined)
        throw new UsageError('--csv exports every matching row: leave out --cursor and --limit');
      return { method: 'GET', path: '/audit-events.csv', query: filters, raw: true };
    },
  },
];
