import { randomUUID } from 'node:crypto';
import { and, eq, sql, type SQL } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import {
  businesses,
  clients,
  locations,
  staff,
  type BusinessSettings,
  type OnboardingStatus,
  type OnboardingStep,
  type StaffRole,
} from '@/db/schema';
import { AppError, type ErrorLocation, type ValidationIssue } from '@/server/errors';
import { enqueue } from '@/server/jobs/enqueue';
import { QUEUES, type ClientImportRow, type ClientsImportJob } from '@/server/jobs/queues';
import { normalizePhone } from '@/server/lib/phone';
import type { BusinessOnboardInput } from '@/server/schemas/onboarding';
import { createBusinessApiKey } from './auth';
import { importConsents } from './compliance/consent';
import { onboardAppointments } from './appointments/onboarding';
import { optOutImportedClients } from './messages/suppression';
import { storeOpeningHours } from './opening-hours';
import { recordEvents } from '@/server/services/events/record';

/**
 * docs/api.md#onboarding: one transaction upserts the business, its senders, locations, staff and
 * clients by `external_id`. Up to SYNC_CLIENT_LIMIT clients are imported before the answer; a
 * larger list is validated in full (so a bad row is still a 422 with its `loc`), then stored as
 * `clients.import` jobs of CLIENT_CHUNK_SIZE rows each, enqueued in the same transaction, and the
 * clients step counts `done` / `total` as a worker imports the chunks.
 *
 * Re-onboarding rule (entries and business alike): a field that is omitted keeps its stored value,
 * a field sent as null clears it, and rows whose values do not change are not written at all, so
 * the same body twice creates and changes nothing.
 */

/** Queue of background client imports; its options and worker are registered with the others. */
export const CLIENTS_IMPORT_QUEUE = QUEUES.clientsImport;
const SYNC_CLIENT_LIMIT = 1_000;
const CLIENT_CHUNK_SIZE = 1_000;
/** A request with thousands of bad rows answers with the first ones, not a megabyte of errors. */
const MAX_ISSUES = 100;
/** Jobs per pg-boss insert statement (each carries up to 1,000 clients). */
const JOBS_PER_INSERT = 10;

/** The clients step also records which import it tracks and which chunks have landed (not shown by the API). */
type StoredStep = OnboardingStep & { import_id?: string; chunks_done?: number[] };

type OnboardResult = {
  business_id: number;
  external_id: string | null;
  api_key: string | null;
  onboarding_status: OnboardingStatus;
  locations: { external_id: string; location_id: number }[];
  staff: { external_id: string; staff_id: number }[];
  clients: { external_id: string; client_id: number }[];
  appointments: { external_id: string; appointment_id: number }[];
};

// ---------------------------------------------------------------------------------------------
// Upserts by external_id, shared by the request and the import worker
// ---------------------------------------------------------------------------------------------

type Column = { column: string; key: string; cast?: 'boolean' | 'smallint'; insertDefault?: string };
type Entity = { table: 'locations' | 'staff' | 'clients'; columns: Column[]; location: boolean; updatedAt: boolean };

const LOCATION_ENTITY: Entity = {
  table: 'locations',
  columns: [
    { column: 'name', key: 'name' },
    { column: 'address', key: 'address' },
    { column: 'phone_number', key: 'phone_number' },
    { column: 'timezone', key: 'timezone' },
    { column: 'sending_window_start', key: 'sending_window_start', cast: 'smallint' },
    { column: 'sending_window_end', key: 'sending_window_end', cast: 'smallint' },
    { column: 'after_hours_reply', key: 'after_hours_reply' },
    { column: 'assignment_policy', key: 'assignment_policy' },
  ],
  location: false,
  updatedAt: false,
};

const PERSON_COLUMNS: Column[] = [
  { column: 'name', key: 'name' },
  { column: 'email', key: 'email' },
  { column: 'phone_number', key: 'phone_number' },
  { column: 'gender', key: 'gender' },
  { column: 'image_url', key: 'image_url' },
];

const STAFF_ENTITY: Entity = {
  table: 'staff',
  columns: [
    ...PERSON_COLUMNS,
    { column: 'role', key: 'role', insertDefault: `'staff'` },
    { column: 'active', key: 'active', cast: 'boolean', insertDefault: 'true' },
  ],
  location: true,
  updatedAt: true,
};

/** A client the platform sends is a customer of the business, not a `lead` (an unknown caller). */
const CLIENT_ENTITY: Entity = {
  table: 'clients',
  columns: [
    ...PERSON_COLUMNS,
    { column: 'client_type', key: 'client_type', insertDefault: `'new'` },
    { column: 'timezone', key: 'timezone' },
  ],
  location: true,
  updatedAt: true,
};

type UpsertCounts = { created: number; updated: number; unchanged: number };

/**
 * Upserts rows by (business_id, external_id) in one statement: the rows travel as one jsonb array
 * (no per-value parameters, no multi-row VALUES), new ones are inserted (`on conflict do nothing`)
 * and existing ones updated in the same statement — the UPDATE runs on the statement's snapshot,
 * so it never sees the rows the INSERT adds. A key absent from a row keeps the stored value, and a
 * row whose values do not change is not written. `insertOnly` creates missing rows and leaves
 * existing ones alone. External ids must be unique within `rows` (the caller checks).
 */
async function upsertByExternalId(
  entity: Entity,
  businessId: number,
  rows: object[],
  insertOnly = false,
  tx: Tx = db,
): Promise<UpsertCounts> {
  if (rows.length === 0) return { created: 0, updated: 0, unchanged: 0 };
  const value = (c: Column) => (c.cast ? `(s.doc->>'${c.key}')::${c.cast}` : `s.doc->>'${c.key}'`);
  const cols = entity.columns.map((c) => c.column);
  const insertCols = [...cols, ...(entity.location ? ['location_id'] : [])].join(', ');
  const insertVals = [
    ...entity.columns.map((c) => (c.insertDefault ? `coalesce(${value(c)}, ${c.insertDefault})` : value(c))),
    ...(entity.location ? ['s.location_id'] : []),
  ].join(', ');
  const newVals = [
    ...entity.columns.map((c) => `case when s.doc ? '${c.key}' then ${value(c)} else t.${c.column} end`),
    ...(entity.location ? [`case when s.doc ? 'location_external_id' then s.location_id else t.location_id end`] : []),
  ];
  const current = [...cols.map((c) => `t.${c}`), ...(entity.location ? ['t.location_id'] : [])];
  const assignments = [
    ...current.map((c, i) => `${c.slice(2)} = ${newVals[i]}`),
    ...(entity.updatedAt ? ['updated_at = now()'] : []),
  ].join(', ');
  const table = sql.raw(entity.table);
  const locationJoin = entity.location
    ? sql`left join locations l on l.business_id = ${businessId} and l.external_id = e.doc->>'location_external_id'`
    : sql`left join (select null::int as id) l on false`;

  // Which fields each updated row changed: `o` is the row as the statement found it, `t` as written.
  const changedFields = current.map((c) => `case when o.${c.slice(2)} is distinct from ${c} then '${c.slice(2)}' end`);
  const update: SQL = insertOnly
    ? sql`select null::int as id, null::text[] as fields where false`
    : sql`update ${table} t set ${sql.raw(assignments)}
          from src s, ${table} o
          where t.business_id = ${businessId} and t.external_id = s.external_id and o.id = t.id
            and (${sql.raw(current.join(', '))}) is distinct from (${sql.raw(newVals.join(', '))})
          returning t.id, array_remove(array[${sql.raw(changedFields.join(', '))}], null) as fields`;
  const [counts] = await tx.execute<{ created: number; updated: number; changed: { id: number; fields: string[] }[] }>(sql`
    with src as (
      select e.doc, e.doc->>'external_id' as external_id, l.id as location_id
      from jsonb_array_elements(${JSON.stringify(rows)}::jsonb) as e(doc)
      ${locationJoin}
    ),
    ins as (
      insert into ${table} (business_id, external_id, ${sql.raw(insertCols)})
      select ${businessId}, s.external_id, ${sql.raw(insertVals)} from src s
      on conflict (business_id, external_id) do nothing
      returning 1
    ),
    upd as (${update})
    select (select count(*) from ins)::int as created, (select count(*) from upd)::int as updated,
      (select coalesce(json_agg(json_build_object('id', id, 'fields', fields)), '[]'::json) from upd) as changed`);
  const created = Number(counts!.created);
  const updated = Number(counts!.updated);
  if (entity.table === 'clients') {
    // An imported client whose stored fields changed (docs/api.md#events); the platform's import is the API's.
    await recordEvents(
      counts!.changed.map((c) => ({
        type: 'client.updated' as const,
        businessId,
        clientId: c.id,
        actor: { type: 'api' as const },
        data: { client_id: c.id, fields: c.fields },
      })),
      tx,
    );
  }
  return { created, updated, unchanged: rows.length - created - updated };
}

/** Ids by external_id, in the order of `externalIds`. */
async function idsByExternalId(
  table: typeof locations | typeof staff | typeof clients,
  businessId: number,
  externalIds: string[],
  tx: Tx,
) {
  if (externalIds.length === 0) return [];
  const rows = await tx
    .select({ id: table.id, externalId: table.externalId })
    .from(table)
    .where(and(eq(table.businessId, businessId), sql`${table.externalId} = any(${sql.param(externalIds)}::text[])`));
  const byExternal = new Map(rows.map((r) => [r.externalId!, r.id]));
  return externalIds.map((externalId) => ({ externalId, id: byExternal.get(externalId)! }));
}

/**
 * Upserts a list of normalised clients for a business (the synchronous path and each import chunk),
 * then appends their consent records (docs/api.md#consent) and their opt-outs (docs/api.md#opt-out), in
 * the caller's transaction.
 */
async function upsertClients(
  businessId: number,
  rows: ClientImportRow[],
  insertOnly = false,
  tx: Tx = db,
): Promise<UpsertCounts> {
  const counts = await upsertByExternalId(CLIENT_ENTITY, businessId, rows, insertOnly, tx);
  await importConsents(businessId, rows, tx);
  await optOutImportedClients(businessId, rows, tx);
  return counts;
}

// ---------------------------------------------------------------------------------------------
// Request normalisation: every 422 found before anything is written
// ---------------------------------------------------------------------------------------------

class Issues {
  readonly list: ValidationIssue[] = [];
  add(loc: ErrorLocation, msg: string, type = 'value_error') {
    if (this.list.length < MAX_ISSUES) this.list.push({ loc, msg, type });
  }
  throwIfAny() {
    if (this.list.length) throw new AppError('validation', 'Validation error', { issues: this.list });
  }
}

/** Undefined stays undefined (keep the stored value); blank text is no value. */
function blank<T extends string | null | undefined>(v: T): T | null {
  if (v === undefined) return v;
  return v === null || v.trim() === '' ? null : v;
}

function phone(value: string | null | undefined, country: string, loc: ErrorLocation, issues: Issues): string | null | undefined {
  const v = blank(value);
  if (v === undefined || v === null) return v;
  const normalised = normalizePhone(v, country);
  if (!normalised) issues.add(loc, `is not a phone number (read with country ${country})`);
  return normalised;
}

/** Drops undefined keys so they stay "omitted" (keep the stored value) through JSON. */
function defined<T extends object>(row: T): T {
  return Object.fromEntries(Object.entries(row).filter(([, v]) => v !== undefined)) as T;
}

function checkUnique(kind: string, entries: { external_id: string }[], issues: Issues) {
  const seen = new Map<string, number>();
  entries.forEach((e, i) => {
    const first = seen.get(e.external_id);
    if (first !== undefined) issues.add(['body', kind, i, 'external_id'], `Duplicate external_id (also at index ${first})`);
    else seen.set(e.external_id, i);
  });
}

function checkLocation(kind: string, i: number, ref: string | null | undefined, known: Set<string>, issues: Issues) {
  if (ref !== undefined && ref !== null && !known.has(ref)) {
    issues.add(
      ['body', kind, i, 'location_external_id'],
      `No location with external_id ${JSON.stringify(ref)} in this request or this business`,
    );
  }
}

type Normalised = {
  smsNumbers: string[] | undefined;
  locations: object[];
  staff: object[];
  clients: ClientImportRow[];
};

function normalise(input: BusinessOnboardInput, country: string, storedLocations: Set<string>): Normalised {
  const issues = new Issues();
  const smsNumbers = input.sms_numbers?.map((n, i) => {
    const e164 = normalizePhone(n, country);
    if (!e164) issues.add(['body', 'sms_numbers', i], `is not a phone number (read with country ${country})`);
    return e164 ?? '';
  });

  const locs = input.locations ?? [];
  const people = input.staff ?? [];
  const customers = input.clients ?? [];
  checkUnique('locations', locs, issues);
  checkUnique('staff', people, issues);
  checkUnique('clients', customers, issues);
  checkUnique('appointments', input.appointments ?? [], issues);
  const known = new Set([...storedLocations, ...locs.map((l) => l.external_id)]);

  const locationRows = locs.map((l, i) =>
    defined({
      external_id: l.external_id,
      name: l.name,
      address: blank(l.address),
      phone_number: phone(l.phone_number, country, ['body', 'locations', i, 'phone_number'], issues),
      timezone: l.timezone,
      // null: the location keeps to the business's window (docs/api.md#quiet-hours).
      sending_window_start: l.sending_window === undefined ? undefined : (l.sending_window?.start ?? null),
      sending_window_end: l.sending_window === undefined ? undefined : (l.sending_window?.end ?? null),
      // "" stays "": no answer at this location; null: the business's (docs/api.md#after-hours-answer).
      after_hours_reply: l.after_hours_reply,
      // null: the business's policy (docs/api.md#auto-assignment).
      assignment_policy: l.assignment_policy,
    }),
  );
  /** The fields a staff member and a client share, normalised, and their location checked. */
  const person = (list: 'staff' | 'clients', p: (typeof people)[number] | (typeof customers)[number], i: number) => {
    checkLocation(list, i, p.location_external_id, known, issues);
    return {
      external_id: p.external_id,
      name: p.name,
      email: blank(p.email),
      phone_number: phone(p.phone_number, country, ['body', list, i, 'phone_number'], issues),
      gender: blank(p.gender),
      image_url: blank(p.image_url),
      location_external_id: p.location_external_id,
    };
  };
  const staffRows = people.map((s, i) =>
    defined({ ...person('staff', s, i), role: s.role as StaffRole | undefined, active: s.active }),
  );
  // A record without a time is dated now, once: a replayed import chunk then carries the same time
  // and adds nothing twice (importConsents).
  const now = new Date().toISOString();
  const clientRows = customers.map((c, i): ClientImportRow =>
    defined({
      ...person('clients', c, i),
      client_type: c.client_type,
      timezone: c.timezone,
      opted_out_sms: c.opted_out_sms || undefined,
      opted_out_email: c.opted_out_email || undefined,
      consents: c.consents?.map((k) => ({ ...k, note: k.note || null, recorded_at: k.recorded_at?.toISOString() ?? now })),
    }),
  );
  issues.throwIfAny();
  return {
    smsNumbers: smsNumbers ? [...new Set(smsNumbers)] : undefined,
    locations: locationRows,
    staff: staffRows,
    clients: clientRows,
  };
}

// ---------------------------------------------------------------------------------------------
// Onboarding
// ---------------------------------------------------------------------------------------------

type BusinessRow = typeof businesses.$inferSelect;

/**
 * Finds the business by external_id (locked for the rest of the transaction, so two onboardings
 * of one business run one after the other) or creates it. Only changed fields are written.
 */
async function upsertBusiness(
  input: BusinessOnboardInput,
  tx: Tx,
): Promise<{ row: BusinessRow; created: boolean; changed: boolean }> {
  const fields = {
    name: input.name,
    timezone: input.timezone,
    ...(input.country !== undefined ? { country: input.country } : {}),
    ...(input.from_email !== undefined ? { fromEmail: blank(input.from_email) } : {}),
    ...(input.from_name !== undefined ? { fromName: blank(input.from_name) } : {}),
    ...(input.sending_window !== undefined
      ? { sendingWindowStart: input.sending_window.start, sendingWindowEnd: input.sending_window.end }
      : {}),
  };
  // A blank recording notice is no notice of the business's own: the default is said (docs/api.md#onboarding).
  const settingsInput: BusinessSettings | undefined = input.settings && {
    ...input.settings,
    recording_notice: blank(input.settings.recording_notice),
    // A blank answer is off, stored as null.
    after_hours_reply: blank(input.settings.after_hours_reply),
  };
  const lockExisting = async () => {
    if (input.external_id === undefined) return undefined;
    const [row] = await tx.select().from(businesses).where(eq(businesses.externalId, input.external_id)).for('no key update');
    return row;
  };

  for (let attempt = 0; attempt < 3; attempt++) {
    const existing = await lockExisting();
    if (existing) {
      const settings: BusinessSettings = settingsInput ? { ...existing.settings, ...defined(settingsInput) } : existing.settings;
      const changes = Object.fromEntries(
        Object.entries({ ...fields, settings }).filter(
          ([k, v]) => JSON.stringify(existing[k as keyof BusinessRow]) !== JSON.stringify(v),
        ),
      ) as Partial<BusinessRow>;
      if (Object.keys(changes).length === 0) return { row: existing, created: false, changed: false };
      const [row] = await tx
        .update(businesses)
        .set({ ...changes, updatedAt: sql`now()` })
        .where(eq(businesses.id, existing.id))
        .returning();
      return { row: row!, created: false, changed: true };
    }
    const [row] = await tx
      .insert(businesses)
      .values({
        externalId: input.external_id ?? null,
        country: 'US',
        settings: settingsInput ? defined(settingsInput) : {},
        onboardingStatus: 'pending',
        onboardingSteps: [],
        ...fields,
      })
      .onConflictDoNothing()
      .returning();
    if (row) return { row, created: true, changed: true };
    // Another request created this external_id between our lookup and insert: lock theirs.
  }
  throw new AppError('conflict', 'The business is being onboarded by another request; try again');
}

/** SMS numbers and the email sender. A number or address owned by another business → 409. */
async function upsertSenders(businessId: number, smsNumbers: string[] | undefined, input: BusinessOnboardInput, tx: Tx) {
  let numbers = 0;
  if (smsNumbers && smsNumbers.length > 0) {
    const taken = await tx.execute<{ phone_number: string }>(sql`
      select phone_number from business_sms_numbers
      where phone_number = any(${sql.param(smsNumbers)}::text[]) and business_id <> ${businessId}
      order by phone_number limit 1`);
    if (taken.length) throw new AppError('conflict', `SMS number ${taken[0]!.phone_number} belongs to another business`);
    await tx.execute(sql`
      insert into business_sms_numbers (business_id, phone_number, is_default)
      select ${businessId}, u.n, u.ord = 1 from unnest(${sql.param(smsNumbers)}::text[]) with ordinality as u(n, ord)
      on conflict (phone_number) do update set is_default = excluded.is_default
      where business_sms_numbers.business_id = excluded.business_id
        and business_sms_numbers.is_default is distinct from excluded.is_default`);
    // The first number is the one default sender.
    await tx.execute(sql`
      update business_sms_numbers set is_default = false
      where business_id = ${businessId} and is_default and phone_number <> ${smsNumbers[0]!}`);
    // A concurrent onboarding may have claimed a number after the check above.
    const [owned] = await tx.execute<{ n: number }>(sql`
      select count(*)::int as n from business_sms_numbers
      where business_id = ${businessId} and phone_number = any(${sql.param(smsNumbers)}::text[])`);
    if (Number(owned!.n) !== smsNumbers.length) throw new AppError('conflict', 'An SMS number belongs to another business');
    numbers = smsNumbers.length;
  }

  const email = blank(input.from_email);
  if (email) {
    const name = blank(input.from_name);
    // Inbound email finds its business by the sender address (senders first, then from_email).
    const taken = await tx.execute(sql`
      select 1 from business_email_senders where lower(email) = ${email} and business_id <> ${businessId}
      union all
      select 1 from businesses where lower(from_email) = ${email} and id <> ${businessId}
      limit 1`);
    if (taken.length) throw new AppError('conflict', `Sender address ${email} belongs to another business`);
    await tx.execute(sql`
      insert into business_email_senders (business_id, email, name, is_default)
      values (${businessId}, ${email}, ${name ?? null}, true)
      on conflict ((lower(email))) do update
        set name = ${name === undefined ? sql`business_email_senders.name` : sql`excluded.name`}, is_default = true
      where business_email_senders.business_id = excluded.business_id
        and (business_email_senders.name, business_email_senders.is_default) is distinct from
            (${name === undefined ? sql`business_email_senders.name` : sql`excluded.name`}, true)`);
    await tx.execute(sql`
      update business_email_senders set is_default = false
      where business_id = ${businessId} and is_default and lower(email) <> ${email}`);
    const [owned] = await tx.execute(sql`
      select 1 from business_email_senders where business_id = ${businessId} and lower(email) = ${email}`);
    if (!owned) throw new AppError('conflict', `Sender address ${email} belongs to another business`);
  }
  return { numbers, email: email ?? null };
}

const plural = (n: number, word: string) => `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;
const countsDetail = (n: number, word: string, c: UpsertCounts) =>
  n === 0
    ? `No ${word}s in the request`
    : `${plural(n, word)}: ${c.created} created, ${c.updated} updated, ${c.unchanged} unchanged`;

/** The business's status from its steps: failed > in_progress > pending > completed. */
function overallStatus(steps: OnboardingStep[]): OnboardingStatus {
  for (const status of ['failed', 'in_progress', 'pending'] as const) if (steps.some((s) => s.status === status)) return status;
  return 'completed';
}

/** POST /business/onboard (platform key; the transport checks that). Everything in one transaction. */
export async function onboardBusiness(input: BusinessOnboardInput, tx: Tx = db): Promise<OnboardResult> {
  return tx.transaction(async (tx) => {
    const { row: business, created, changed } = await upsertBusiness(input, tx);
    const businessId = business.id;

    const referencesLocations = [...(input.staff ?? []), ...(input.clients ?? [])].some((e) => e.location_external_id != null);
    const stored = referencesLocations
      ? await tx
          .select({ externalId: locations.externalId })
          .from(locations)
          .where(and(eq(locations.businessId, businessId), sql`${locations.externalId} is not null`))
      : [];
    const data = normalise(input, business.country, new Set(stored.map((l) => l.externalId!)));

    const senders = await upsertSenders(businessId, data.smsNumbers, input, tx);
    const locationCounts = await upsertByExternalId(LOCATION_ENTITY, businessId, data.locations, undefined, tx);
    const staffCounts = await upsertByExternalId(STAFF_ENTITY, businessId, data.staff, undefined, tx);
    const locationIds = await idsByExternalId(
      locations,
      businessId,
      (input.locations ?? []).map((l) => l.external_id),
      tx,
    );
    // Opening hours given for the business or a location (docs/api.md#opening-hours); null removes its own.
    const locationIdOf = new Map(locationIds.map((l) => [l.externalId, l.id]));
    await storeOpeningHours(
      businessId,
      [
        ...(input.opening_hours !== undefined ? [{ locationId: null, schedule: input.opening_hours }] : []),
        ...(input.locations ?? []).flatMap((l) =>
          l.opening_hours !== undefined ? [{ locationId: locationIdOf.get(l.external_id)!, schedule: l.opening_hours }] : [],
        ),
      ],
      tx,
    );
    const staffIds = await idsByExternalId(
      staff,
      businessId,
      (input.staff ?? []).map((s) => s.external_id),
      tx,
    );

    const previousClientsStep = (business.onboardingSteps as StoredStep[]).find((s) => s.name === 'clients');
    let clientsStep: StoredStep;
    let clientIds: { externalId: string; id: number }[] = [];
    const total = data.clients.length;
    if (total === 0) {
      // Nothing to import: an import still running from an earlier onboarding keeps its step.
      clientsStep = previousClientsStep ?? {
        name: 'clients',
        status: 'completed',
        detail: 'No clients in the request',
        done: 0,
        total: 0,
      };
    } else if (total <= SYNC_CLIENT_LIMIT) {
      const counts = await upsertClients(businessId, data.clients, undefined, tx);
      clientIds = await idsByExternalId(
        clients,
        businessId,
        data.clients.map((c) => c.external_id),
        tx,
      );
      clientsStep = { name: 'clients', status: 'completed', detail: countsDetail(total, 'client', counts), done: total, total };
    } else {
      const importId = randomUUID();
      const jobs: { data: ClientsImportJob }[] = [];
      for (let start = 0; start < total; start += CLIENT_CHUNK_SIZE) {
        const chunk = data.clients.slice(start, start + CLIENT_CHUNK_SIZE);
        jobs.push({ data: { businessId, importId, chunk: jobs.length, clients: chunk } });
      }
      for (let i = 0; i < jobs.length; i += JOBS_PER_INSERT) {
        await enqueue(tx, CLIENTS_IMPORT_QUEUE, jobs.slice(i, i + JOBS_PER_INSERT));
      }
      clientsStep = {
        name: 'clients',
        status: 'in_progress',
        detail: `Importing ${plural(total, 'client')} in the background (${plural(jobs.length, 'chunk')})`,
        done: 0,
        total,
        import_id: importId,
        chunks_done: [],
      };
    }

    // Upcoming appointments, once their clients exist (docs/api.md#appointments).
    const appointmentIds = await onboardAppointments(businessId, input.appointments ?? [], total > SYNC_CLIENT_LIMIT, tx);

    const steps: StoredStep[] = [
      {
        name: 'business',
        status: 'completed',
        detail: created ? 'Business created' : changed ? 'Business updated' : 'Business unchanged',
      },
      {
        name: 'senders',
        status: 'completed',
        detail: `${plural(senders.numbers, 'SMS number')} in the request; email sender: ${senders.email ?? (business.fromEmail ? 'unchanged' : 'none')}`,
      },
      { name: 'locations', status: 'completed', detail: countsDetail(data.locations.length, 'location', locationCounts) },
      { name: 'staff', status: 'completed', detail: countsDetail(data.staff.length, 'staff member', staffCounts) },
      clientsStep,
    ];
    const status = overallStatus(steps);
    await tx.update(businesses).set({ onboardingStatus: status, onboardingSteps: steps }).where(eq(businesses.id, businessId));

    const apiKey = created ? await createBusinessApiKey(businessId, tx) : null;
    return {
      business_id: businessId,
      external_id: business.externalId,
      api_key: apiKey,
      onboarding_status: status,
      locations: locationIds.map((l) => ({ external_id: l.externalId, location_id: l.id })),
      staff: staffIds.map((s) => ({ external_id: s.externalId, staff_id: s.id })),
      clients: clientIds.map((c) => ({ external_id: c.externalId, client_id: c.id })),
      appointments: appointmentIds,
    };
  });
}

/** GET /business/{business_id}/onboarding-status (tenancy is checked by the transport). */
export async function getOnboardingStatus(businessId: number, tx: Tx = db) {
  const [row] = await tx
    .select({ status: businesses.onboardingStatus, steps: businesses.onboardingSteps })
    .from(businesses)
    .where(eq(businesses.id, businessId))
    .limit(1);
  if (!row) throw AppError.notFound('Business');
  return {
    business_id: businessId,
    status: row.status,
    steps: (row.steps as StoredStep[]).map((s) =>
      defined({ name: s.name, status: s.status, detail: s.detail ?? null, done: s.done, total: s.total }),
    ),
  };
}

// ---------------------------------------------------------------------------------------------
// Background import (its jobs: onboarding-import.ts)
// ---------------------------------------------------------------------------------------------

type ChunkOutcome = 'imported' | 'already_imported' | 'superseded' | 'business_gone';

/**
 * Imports one chunk in its own transaction. The business row is locked first (the same order as
 * onboarding, so the two cannot deadlock), which also makes the progress update atomic: the chunk
 * index is recorded with `done += size` only if it is not recorded yet, so a retried or replayed
 * chunk neither counts twice nor rewrites anything. A chunk of an import that a later onboarding
 * replaced still creates the clients it names but overwrites nothing (the later data wins).
 */
export async function importClientsChunk(
  job: ClientsImportJob,
  tx: Tx = db,
): Promise<{ outcome: ChunkOutcome } & Partial<UpsertCounts>> {
  return tx.transaction(async (tx) => {
    const [business] = await tx
      .select({ steps: businesses.onboardingSteps })
      .from(businesses)
      .where(eq(businesses.id, job.businessId))
      .for('no key update');
    if (!business) return { outcome: 'business_gone' as const };
    const steps = business.steps as StoredStep[];
    const step = steps.find((s) => s.name === 'clients');
    const current = step?.import_id === job.importId;
    if (current && step!.chunks_done?.includes(job.chunk)) return { outcome: 'already_imported' as const };

    const counts = await upsertClients(job.businessId, job.clients, !current, tx);
    if (!current) return { outcome: 'superseded' as const, ...counts };

    const done = (step!.done ?? 0) + job.clients.length;
    const total = step!.total ?? done;
    const finished = done >= total;
    const next: StoredStep = {
      ...step!,
      done,
      chunks_done: [...(step!.chunks_done ?? []), job.chunk],
      status: finished ? 'completed' : step!.status === 'failed' ? 'failed' : 'in_progress',
      detail: finished
        ? `${plural(total, 'client')} imported`
        : `${done.toLocaleString('en-US')} of ${plural(total, 'client')} imported`,
    };
    const nextSteps = steps.map((s) => (s === step ? next : s));
    await tx
      .update(businesses)
      .set({ onboardingSteps: nextSteps, onboardingStatus: overallStatus(nextSteps) })
      .where(eq(businesses.id, job.businessId));
    return { outcome: 'imported' as const, ...counts };
  });
}

/** A chunk that ran out of retries: the clients step and the business become `failed`. */
export async function markClientsImportFailed(job: ClientsImportJob, reason: string, tx: Tx = db): Promise<void> {
  await tx.transaction(async (tx) => {
    const [business] = await tx
      .select({ steps: businesses.onboardingSteps })
      .from(businesses)
      .where(eq(businesses.id, job.businessId))
      .for('no key update');
    const steps = (business?.steps ?? []) as StoredStep[];
    const step = steps.find((s) => s.name === 'clients');
    if (!business || step?.import_id !== job.importId || step.chunks_done?.includes(job.chunk)) return;
    const nextSteps = steps.map((s) =>
      s === step
        ? {
            ...s,
            status: 'failed' as const,
            detail: `Chunk ${job.chunk + 1} (${plural(job.clients.length, 'client')}) failed: ${reason.slice(0, 300)}`,
          }
        : s,
    );
    await tx
      .update(businesses)
      .set({ onboardingSteps: nextSteps, onboardingStatus: overallStatus(nextSteps) })
      .where(eq(businesses.id, job.businessId));
  });
}
