import { sql } from 'drizzle-orm';
import { it } from 'vitest';
import { db } from '@/db/client';
import { createBusiness, createClient, createConversation } from '@/server/testing/factories';
import { matchQuery } from './search';

const N = Number(process.env.SCRATCH_N ?? 20000);

async function seed(businessId: number, n: number, convCount: number) {
  const convs = [];
  for (let i = 0; i < convCount; i++) {
    const c = await createClient(businessId);
    convs.push(await createConversation(businessId, c.id));
  }
  const convIds = convs.map((c) => c.id);
  const clientIds = convs.map((c) => c.clientId);
  const t0 = performance.now();
  await db.execute(sql`
    insert into messages (business_id, conversation_id, client_id, channel, direction, message_type, sender_type, content, subject, status, sent_at)
    select ${businessId}, (${sql.param(convIds)}::int[])[1 + g % ${convCount}], (${sql.param(clientIds)}::int[])[1 + g % ${convCount}],
      'sms', 'outbound', 'TEXT', 'staff',
      'Hello there, your appointment number ' || g || ' is confirmed. See you soon! ' || md5(g::text) ||
        case when g % 5000 = 7 then ' zebrafish' else '' end,
      null, 'sent', now() - (g || ' seconds')::interval
    from generate_series(1, ${n}) g`);
  console.log(`insert ${n}: ${Math.round(performance.now() - t0)} ms`);
  return convs;
}

it('plans', async () => {
  const b1 = await createBusiness();
  const b2 = await createBusiness();
  const convs = await seed(b1.id, N, 200);
  await seed(b2.id, N, 200);
  await db.execute(sql.raw(process.env.SCRATCH_MAINT ?? 'analyze messages'));
  const show = async (label: string, q: ReturnType<typeof matchQuery>) => {
    for (let i = 0; i < 2; i++) await db.execute(q);
    const t0 = performance.now();
    for (let i = 0; i < 5; i++) await db.execute(q);
    const ms = (performance.now() - t0) / 5;
    const plan = await db.execute<{ 'QUERY PLAN': string }>(sql`explain (analyze, buffers off) ${q}`);
    console.log(`\n=== ${label}: avg ${ms.toFixed(2)} ms round trip\n` + plan.map((r) => r['QUERY PLAN']).join('\n'));
  };
  const raw = async (label: string, q: any) => {
    const plan = await db.execute<{ 'QUERY PLAN': string }>(sql`explain (analyze, buffers off) ${q}`);
    console.log(`\n=== ${label}\n` + plan.map((r) => r['QUERY PLAN']).join('\n'));
  };
  await raw('content only with business', sql`select id from messages where business_id = ${b1.id} and content ilike '%zebrafish%'`);
  await raw('content only no business', sql`select id from messages where content ilike '%zebrafish%'`);
  for (const term of ['zebrafish', 'appointment']) {
    await show(`business ${term}`, matchQuery({ businessId: b1.id, term, limit: 25, offset: 0 }));
  }
  await raw('OR with business', sql`select id from messages where business_id = ${b1.id} and (content ilike '%zebrafish%' or subject ilike '%zebrafish%')`);
  await raw('OR no business', sql`select id from messages where content ilike '%zebrafish%' or subject ilike '%zebrafish%'`);
  await db.execute(sql`set enable_seqscan = off`);
  await raw('OR with business, seqscan off', sql`select id from messages where business_id = ${b1.id} and (content ilike '%zebrafish%' or subject ilike '%zebrafish%')`);
  await db.execute(sql`set enable_seqscan = on`);
  await raw('stats', sql`select relpages, reltuples from pg_class where relname = 'messages'`);
  console.log(await db.execute(sql`select relname, relpages, reltuples from pg_class where relname like 'messages%'`));
  console.log(await db.execute(sql`show max_connections`), await db.execute(sql`select name, setting from pg_settings where name in ('random_page_cost','effective_cache_size','work_mem','shared_buffers','seq_page_cost', 'cpu_operator_cost')`));
}, 600_000);
