import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { notificationDigests } from '@/db/schema';
import { setNotificationPreferences } from '@/server/services/notifications/preferences';
import { storeOpeningHours } from '@/server/services/opening-hours';
import { setStaffSchedule } from '@/server/services/staff-schedules';
import { WEEKDAYS, type Schedule } from '@/server/shared/opening-hours';
import { createBusiness, createClient, createConversation, createLocation, createStaff } from '@/server/testing/factories';
import { smtpSinkPerFile } from '@/server/testing/smtp-per-file';
import { MAX_DIGEST_ITEMS, sendWaitingDigests } from './digest';

const smtp = smtpSinkPerFile();

/** Every day 09:00–17:00 (UTC: the business's zone). */
const nineToFive = (start = 540, end = 1020): Schedule => ({
  weekly: Object.fromEntries(WEEKDAYS.map((d) => [d, [{ start, end }]])) as Schedule['weekly'],
  exceptions: [],
});

const at = (iso: string) => new Date(iso);
const hours = (d: Date, h: number) => new Date(d.getTime() + h * 3_600_000);

/** A business open 09:00–17:00 UTC with one staff member (on shift in those hours) and the settings given. */
async function openBusiness(settings = {}) {
  const business = await createBusiness({ settings, timezone: 'UTC' });
  await storeOpeningHours(business.id, [{ locationId: null, schedule: nineToFive() }]);
  const staff = await createStaff(business.id, { name: 'Ana' });
  return { business, businessId: business.id, staff };
}

/** A conversation whose client has waited for a reply since `since`, unassigned unless said. */
async function waiting(businessId: number, since: Date, fields: { assignedStaffId?: number; locationId?: number } = {}) {
  const client = await createClient(businessId, { name: `Client waiting since ${since.toISOString()}` });
  return createConversation(businessId, client.id, { waitingSince: since, status: 'open', ...fields });
}

const mailsTo = (address: string | null) => smtp.sink().messages.filter((m) => m.envelope.to.includes(address!));
const digestsOf = (staffId: number) =>
  db.select().from(notificationDigests).where(eq(notificationDigests.staffId, staffId)).orderBy(notificationDigests.id);

describe('the waiting digest', () => {
  it('lists what waited past the threshold in business minutes, with links, and goes only while open', async () => {
    const t = await openBusiness();
    // Waited 30 min before closing and 60 min this morning: 90 business minutes at 10:00.
    const long = await waiting(t.businessId, at('2030-01-07T16:30:00Z'));
    // Waited overnight (16 h on the wall clock) but 15 + 10 = 25 business minutes at 09:10.
    const overnight = await waiting(t.businessId, at('2030-01-07T16:45:00Z'));

    // Closed (20:00): nothing.
    expect(await sendWaitingDigests(smtp.provider(), at('2030-01-07T20:00:00Z'))).toBe(0);
    // 09:10: the first has 30 + 10 = 40 business minutes, the second 25: neither over 60.
    await sendWaitingDigests(smtp.provider(), at('2030-01-08T09:10:00Z'));
    expect(mailsTo(t.staff.email)).toHaveLength(0);

    // 10:00: the first has 90 business minutes, the second 75: both, longest first.
    await sendWaitingDigests(smtp.provider(), at('2030-01-08T10:00:00Z'));
    const [mail] = mailsTo(t.staff.email);
    expect(mail).toBeDefined();
    expect(mail!.parsed.subject).toBe(`[${t.business.name}] 2 conversations waiting for a reply`);
    expect(mail!.parsed.from?.value[0]?.address).toBe('notifications@localhost');
    const text = mail!.parsed.text!;
    expect(text).toContain('longer than 1 h of opening hours');
    expect(text.indexOf(`/inbox/${long.id}`)).toBeGreaterThan(-1);
    expect(text.indexOf(`/inbox/${long.id}`)).toBeLessThan(text.indexOf(`/inbox/${overnight.id}`));
    expect(text).toContain('waiting 1 h 30 min (unassigned)');
    expect(text).toContain('waiting 1 h 15 min (unassigned)');
    const [digest] = await digestsOf(t.staff.id);
    expect(digest!.conversationIds.sort()).toEqual([long.id, overnight.id].sort());
    expect(digest!.sentAt.toISOString()).toBe('2030-01-08T10:00:00.000Z');
    expect(digest!.emailDetail).toMatch(/^sent as </);
  });

  it('lists a waiting once, sends at most one an hour, and lists it again once a new waiting began', async () => {
    const t = await openBusiness({ waiting_digest_minutes: 30 });
    const first = await waiting(t.businessId, at('2030-02-04T09:00:00Z'));
    const ten = at('2030-02-04T10:00:00Z');
    await sendWaitingDigests(smtp.provider(), ten);
    expect(mailsTo(t.staff.email)).toHaveLength(1);

    // A new one over the threshold 30 minutes later: not within the hour.
    const second = await waiting(t.businessId, at('2030-02-04T09:50:00Z'));
    await sendWaitingDigests(smtp.provider(), hours(ten, 0.5));
    expect(mailsTo(t.staff.email)).toHaveLength(1);

    // After the hour: the second only (the first was listed in this waiting of its).
    await sendWaitingDigests(smtp.provider(), hours(ten, 1));
    expect(mailsTo(t.staff.email)).toHaveLength(2);
    expect(mailsTo(t.staff.email)[1]!.parsed.text).toContain(`/inbox/${second.id}`);
    expect(mailsTo(t.staff.email)[1]!.parsed.text).not.toContain(`/inbox/${first.id}`);

    // Nothing new two hours on: nothing sent.
    await sendWaitingDigests(smtp.provider(), hours(ten, 3));
    expect(mailsTo(t.staff.email)).toHaveLength(2);

    // Answered, then the client wrote again: a new waiting, listed once over the threshold.
    await db.execute(sql`update conversations set waiting_since = ${'2030-02-04T13:00:00Z'}::timestamptz where id = ${first.id}`);
    await sendWaitingDigests(smtp.provider(), at('2030-02-04T13:40:00Z'));
    expect(mailsTo(t.staff.email)).toHaveLength(3);
    expect(mailsTo(t.staff.email)[2]!.parsed.text).toContain(`/inbox/${first.id}`);
    expect(await digestsOf(t.staff.id)).toHaveLength(3);
  });

  it('goes only to available staff with an address and the preference, about their conversations and those nobody holds where they work', async () => {
    const t = await openBusiness();
    const there = await createLocation(t.businessId, { timezone: 'UTC' });
    const elsewhere = await createLocation(t.businessId, { timezone: 'UTC' });
    const away = await createStaff(t.businessId, { name: 'Away', away: true });
    const noMail = await createStaff(t.businessId, { name: 'No mail', email: null });
    const off = await createStaff(t.businessId, { name: 'Off' });
    await setNotificationPreferences(t.businessId, off.id, { waiting_digest: { email: false } });
    const inactive = await createStaff(t.businessId, { name: 'Gone', active: false });
    const local = await createStaff(t.businessId, { name: 'Local', locationId: there.id });
    const colleague = await createStaff(t.businessId, { name: 'Colleague' });

    const since = at('2030-03-04T09:00:00Z');
    const unassignedThere = await waiting(t.businessId, since, { locationId: there.id });
    const unassignedElsewhere = await waiting(t.businessId, since, { locationId: elsewhere.id });
    const colleagues = await waiting(t.businessId, since, { assignedStaffId: colleague.id });
    const anas = await waiting(t.businessId, since, { assignedStaffId: t.staff.id });

    await sendWaitingDigests(smtp.provider(), at('2030-03-04T11:00:00Z'));
    for (const s of [away, noMail, off, inactive]) expect(await digestsOf(s.id)).toHaveLength(0);
    const listed = async (id: number) => (await digestsOf(id))[0]?.conversationIds.sort((a, b) => a - b);
    const sorted = (ids: number[]) => ids.sort((a, b) => a - b);
    // Ana (no location) works everywhere: hers and every unassigned one.
    expect(await listed(t.staff.id)).toEqual(sorted([unassignedThere.id, unassignedElsewhere.id, anas.id]));
    // Local: only the unassigned one of her location.
    expect(await listed(local.id)).toEqual([unassignedThere.id]);
    expect(await listed(colleague.id)).toEqual(sorted([unassignedThere.id, unassignedElsewhere.id, colleagues.id]));
    expect(mailsTo(away.email)).toHaveLength(0);
    expect(mailsTo(off.email)).toHaveLength(0);
  });

  it('is off when the business says null, and counts a location’s own hours', async () => {
    const off = await openBusiness({ waiting_digest_minutes: null });
    await waiting(off.businessId, at('2030-04-01T09:00:00Z'));
    await sendWaitingDigests(smtp.provider(), at('2030-04-01T16:00:00Z'));
    expect(await digestsOf(off.staff.id)).toHaveLength(0);

    // A location open only from 12:00: at 13:00 its conversation since 09:00 has waited 60 business minutes.
    const t = await openBusiness({ waiting_digest_minutes: 90 });
    const noon = await createLocation(t.businessId, { timezone: 'UTC' });
    await storeOpeningHours(t.businessId, [{ locationId: noon.id, schedule: nineToFive(720, 1200) }]);
    const c = await waiting(t.businessId, at('2030-04-01T09:00:00Z'), { locationId: noon.id });
    await sendWaitingDigests(smtp.provider(), at('2030-04-01T13:00:00Z'));
    expect(await digestsOf(t.staff.id)).toHaveLength(0);
    await sendWaitingDigests(smtp.provider(), at('2030-04-01T13:30:00Z'));
    expect((await digestsOf(t.staff.id))[0]?.conversationIds).toEqual([c.id]);
  });

  it('reads the business’s own clock: its opening hours in its time zone', async () => {
    // 09:00–17:00 in Los Angeles (UTC−8 in January): 10:00 UTC is 02:00 there, closed.
    const business = await createBusiness({ timezone: 'America/Los_Angeles' });
    await storeOpeningHours(business.id, [{ locationId: null, schedule: nineToFive() }]);
    const ana = await createStaff(business.id, { name: 'Ana' });
    await waiting(business.id, at('2030-01-07T23:00:00Z')); // 15:00 there
    await sendWaitingDigests(smtp.provider(), at('2030-01-08T10:00:00Z'));
    expect(await digestsOf(ana.id)).toHaveLength(0);
    // 18:30 UTC is 10:30 there: 2 h before closing and 1 h 30 this morning, 3 h 30 in all.
    await sendWaitingDigests(smtp.provider(), at('2030-01-08T18:30:00Z'));
    expect(await digestsOf(ana.id)).toHaveLength(1);
    expect(mailsTo(ana.email)[0]!.parsed.text).toContain('waiting 3 h 30 min');
  });

  it('leaves out a conversation whose own hours are closed now, and staff off shift', async () => {
    const t = await openBusiness({ waiting_digest_minutes: 30 });
    const mornings = await createLocation(t.businessId, { timezone: 'UTC' });
    await storeOpeningHours(t.businessId, [{ locationId: mornings.id, schedule: nineToFive(540, 720) }]);
    const afternoonOnly = await createStaff(t.businessId, { name: 'Night' });
    await setStaffSchedule(t.businessId, afternoonOnly.id, nineToFive(900, 1020));
    await waiting(t.businessId, at('2030-06-03T09:00:00Z'), { locationId: mornings.id });
    const openNow = await waiting(t.businessId, at('2030-06-03T09:00:00Z'));
    // 13:00: the business is open, the mornings location closed since 12:00; the colleague starts at 15:00.
    await sendWaitingDigests(smtp.provider(), at('2030-06-03T13:00:00Z'));
    expect((await digestsOf(t.staff.id))[0]?.conversationIds).toEqual([openNow.id]);
    expect(await digestsOf(afternoonOnly.id)).toHaveLength(0);
  });

  it('lists at most 50, the longest waiting first', async () => {
    const t = await openBusiness();
    const ids: number[] = [];
    for (let i = 0; i < MAX_DIGEST_ITEMS + 1; i++)
      ids.push((await waiting(t.businessId, new Date(at('2030-07-01T09:00:00Z').getTime() + i * 60_000))).id);
    await sendWaitingDigests(smtp.provider(), at('2030-07-01T16:00:00Z'));
    const [digest] = await digestsOf(t.staff.id);
    expect(digest!.conversationIds).toEqual(ids.slice(0, MAX_DIGEST_ITEMS));
    expect(mailsTo(t.staff.email)[0]!.parsed.subject).toContain(`${MAX_DIGEST_ITEMS} conversations waiting`);
  });

  it('is sent once when two workers sweep at the same moment', async () => {
    const t = await openBusiness();
    await waiting(t.businessId, at('2030-05-06T09:00:00Z'));
    const now = at('2030-05-06T11:00:00Z');
    await Promise.all([sendWaitingDigests(smtp.provider(), now), sendWaitingDigests(smtp.provider(), now)]);
    await new Promise((r) => setTimeout(r, 200));
    expect(mailsTo(t.staff.email)).toHaveLength(1);
    expect(await digestsOf(t.staff.id)).toHaveLength(1);
  });
});
