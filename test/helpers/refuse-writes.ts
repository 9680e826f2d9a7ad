// R3: makes the real PostgreSQL refuse to finish one delivery's attempt rows (a trigger scoped to that delivery id),
// to test what happens when an attempt cannot be recorded. Refusals are counted by a sequence, which a rolled-back
// transaction does not undo. Other tests' rows are untouched; the function pins its search_path like every function in public (A10), which a concurrent test checks.
import type postgres from 'postgres';

export async function refuseAttemptWrites(sql: postgres.Sql, deliveryId: string, refuse: 'details' | 'all') {
  if (!/^whd_[0-9a-z]+$/.test(deliveryId)) throw new Error(`unexpected delivery id ${deliveryId}`);
  const name = `refuse_${deliveryId}`;
  // 'details': only a row carrying a response excerpt; 'all': any update that finishes the in-flight row.
  const when = refuse === 'details' ? 'new.response_excerpt is not null' : `new.error_kind is distinct from 'in_flight'`;
  await sql.unsafe(`create sequence ${name}_count`);
  await sql.unsafe(`
    create function ${name}() returns trigger language plpgsql set search_path = pg_catalog, public, pg_temp as $$
    begin
      perform nextval('${name}_count');
      raise exception 'refused by the test' using errcode = '22021';
    end $$`);
  await sql.unsafe(`
    create trigger ${name} before update on delivery_attempts for each row
    when (new.delivery_id = '${deliveryId}' and ${when}) execute function ${name}()`);
  let lifted = false;
  return {
    async refusals(): Promise<number> {
      const [row] = await sql.unsafe<Array<{ last_value: string; is_called: boolean }>>(`select last_value, is_called from ${name}_count`);
      return row!.is_called ? Number(row!.last_value) : 0;
    },
    async lift(): Promise<void> {
      if (lifted) return;
      lifted = true;
      await sql.unsafe(`drop trigger ${name} on delivery_attempts`);
      await sql.unsafe(`drop function ${name}()`);
      await sql.unsafe(`drop sequence ${name}_count`);
    },
  };
}
