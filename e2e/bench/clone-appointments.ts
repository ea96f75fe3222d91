import type { TransactionSql } from 'postgres';
import type { createSql } from '@/db/connect';

type Sql = ReturnType<typeof createSql>;

/**
 * Setup for bench:appointments, in bulk: appointments written in SQL after the shape of one that
 * `upsertAppointment` wrote (the template): each with its client's conversation, its reminders
 * (messages copied from the template's, column for column, with this appointment's client, number,
 * conversation and send_at; the template's words, which name the template's time), their
 * `appointment_reminders` links and their send-later jobs (copied from the template's jobs, started
 * at the new send_at). The tables' triggers run as for the service's rows (message_search, counts);
 * no event is logged: what is measured is the sending and the replies, not the log's backlog.
 */
export async function cloneAppointments(
  sql: Sql,
  businessId: number,
  template: { appointmentId: number },
  appointments: { clientId: number; externalId: string; startsAt: Date }[],
): Promise<void> {
  await sql.begin(async (tx) => {
    const [t] = await tx<{ conversation_id: number }[]>`
      select c.id as conversation_id from appointments a
      join conversations c on c.business_id = a.business_id and c.client_id = a.client_id
      where a.business_id = ${businessId} and a.id = ${template.appointmentId}`;
    const reminders = await tx<{ message_id: number; before_seconds: number; asks_confirmation: boolean; job_id: string }[]>`
      select r.message_id::int, r.before_seconds, r.asks_confirmation, j.id::text as job_id
      from appointment_reminders r
      join pgboss.job j on j.name = 'sms.send.later' and (j.data->>'messageId')::bigint = r.message_id
      where r.business_id = ${businessId} and r.appointment_id = ${template.appointmentId} and r.active`;
    if (!t || reminders.length === 0) throw new Error('the template appointment has no conversation or reminder');
    await tx`
      create temp table bench_clone on commit drop as
      select * from unnest(${appointments.map((a) => a.clientId)}::int[], ${appointments.map((a) => a.externalId)}::text[],
                           ${appointments.map((a) => a.startsAt.toISOString())}::timestamptz[]) as s(client_id, external_id, starts_at)`;
    await tx`
      insert into appointments (business_id, external_id, client_id, starts_at, ends_at, service, status)
      select ${businessId}, s.external_id, s.client_id, s.starts_at, s.starts_at + interval '1 hour', 'Haircut', 'booked'
      from bench_clone s`;
    const conversationColumns = await copyList(tx, 'public', 'conversations', {
      client_id: 's.client_id',
      last_message_id: 'null',
      created_at: 'now()',
      last_activity_at: 'now()',
    });
    await tx.unsafe(
      `insert into conversations (${conversationColumns.names}) select ${conversationColumns.values}
       from conversations t cross join bench_clone s where t.id = $1`,
      [t.conversation_id],
    );
    for (const r of reminders) {
      const messageColumns = await copyList(tx, 'public', 'messages', {
        conversation_id: 'c.id',
        client_id: 's.client_id',
        receiver_id: 's.client_id',
        to_address: 'cl.phone_number',
        send_at: `s.starts_at - interval '${r.before_seconds} seconds'`,
        request_id: 'gen_random_uuid()',
        provider_metadata: `t.provider_metadata || jsonb_build_object('appointment_id', a.id, 'appointment_external_id', a.external_id)`,
        sent_at: 'now()',
        status_updated_at: 'now()',
        created_at: 'now()',
      });
      const jobColumns = await copyList(tx, 'pgboss', 'job', {
        id: 'gen_random_uuid()',
        data: `jsonb_build_object('messageId', m.id, 'businessId', m.business_id)`,
        start_after: 'm.send_at',
        created_on: 'now()',
        keep_until: 'm.send_at + (t.keep_until - t.start_after)',
      });
      await tx.unsafe(
        `with m as (
           insert into messages (${messageColumns.names})
           select ${messageColumns.values}
           from messages t cross join bench_clone s
           join appointments a on a.business_id = t.business_id and a.external_id = s.external_id
           join conversations c on c.business_id = t.business_id and c.client_id = s.client_id
           join clients cl on cl.business_id = t.business_id and cl.id = s.client_id
           where t.id = $1
           returning id, business_id, send_at, (provider_metadata->>'appointment_id')::int as appointment_id
         ), links as (
           insert into appointment_reminders (business_id, appointment_id, message_id, before_seconds, for_starts_at, asks_confirmation)
           select m.business_id, m.appointment_id, m.id, $2::int, m.send_at + $2::int * interval '1 second', $3::boolean from m
         )
         insert into pgboss.job (${jobColumns.names})
         select ${jobColumns.values} from pgboss.job t cross join m where t.name = 'sms.send.later' and t.id = $4::uuid`,
        [r.message_id, r.before_seconds, r.asks_confirmation, r.job_id],
      );
    }
    // Each conversation's latest message, as the service's refresh leaves it.
    await tx`
      update conversations c set last_message_id = (select max(m.id) from messages m where m.business_id = c.business_id and m.conversation_id = c.id)
      where c.business_id = ${businessId} and c.last_message_id is null`;
  });
  await sql`analyze appointments, appointment_reminders, messages, conversations, pgboss.job`;
}

/** A table's columns (but generated ones) and, for each, `overrides`' expression or the template row's (`t.`) value; `id` is left to its default unless overridden. */
async function copyList(tx: TransactionSql, schema: string, table: string, overrides: Record<string, string>) {
  const columns = await tx<{ name: string; type: string }[]>`
    select column_name as name, udt_name as type from information_schema.columns
    where table_schema = ${schema} and table_name = ${table} and is_generated = 'NEVER' and (column_name <> 'id' or ${'id' in overrides})
    order by ordinal_position`;
  return {
    names: columns.map((c) => `"${c.name}"`).join(', '),
    values: columns.map((c) => (overrides[c.name] ? `(${overrides[c.name]})::${c.type}` : `t."${c.name}"`)).join(', '),
  };
}
