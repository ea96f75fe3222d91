import { Faker, base, en } from '@faker-js/faker';
import { and, eq, sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { equalsAny } from '@/db/sql-array';
import {
  apiKeys,
  businessEmailSenders,
  businesses,
  businessSmsNumbers,
  clients,
  conversations,
  locations,
  messages,
  optOuts,
  optOutEvents,
  savedReplies,
  staff,
  type BusinessSettings,
  type Channel,
  type ClientType,
  type ConversationStatus,
  type MessageCategory,
  type MessageStatus,
  type MessageType,
  type NotificationType,
  type StaffRole,
  type UserType,
} from '@/db/schema';
import { newBusinessApiKey } from '@/server/lib/secret-tokens';
import { enqueueSends } from '@/server/services/messages/send-jobs';
import { emailErrorMessage, twilioErrorMessage } from '@/server/shared/provider-errors';

/**
 * Demo data: a realistic week at a two-location hair salon and a skin clinic — businesses with
 * their SMS number and email sender, locations, staff, 300 clients, their conversations and ~2,000
 * SMS / email / call / note messages over the last 7 days. Deterministic for a given `seed` (and
 * `now`), except the API keys, which are random. Refuses to run on a database that has a business.
 */

export type SeedSummary = {
  businesses: { id: number; name: string; ownerStaffId: number; apiKey: string }[];
  locations: number;
  staff: number;
  clients: number;
  messages: number;
};

export type SeedOptions = {
  /** faker seed; 42 by default. */
  seed?: number;
  /** The end of the demo week (message times are relative to it); the current time by default. */
  now?: Date;
};

/** True when any business exists. */
/** Saved replies every demo business starts with (docs/api.md#saved-replies), so the composer's `/` has something to find. */
const DEMO_SAVED_REPLIES = [
  {
    title: 'Running late',
    body: 'Hi {{client.first_name}}, {{staff.first_name}} here: running about 10 minutes late today. Sorry for the wait!',
    channel: null,
    subject: null,
  },
  {
    title: 'Directions',
    body: 'Hi {{client.first_name}}, we are {{business.name}} at {{location.name}}. Call {{location.phone}} if you cannot find us.',
    channel: 'sms' as const,
    subject: null,
  },
  {
    title: 'Thank you for visiting',
    body: 'Dear {{client.name}},\n\nThank you for visiting {{business.name}}. We hope to see you again soon.\n\n{{staff.first_name}}',
    channel: 'email' as const,
    subject: 'Thank you, {{client.first_name}}',
  },
];

export async function databaseHasData(tx: Tx = db): Promise<boolean> {
  const rows = await tx.select({ id: businesses.id }).from(businesses).limit(1);
  return rows.length > 0;
}

/** Inserts the demo data in one transaction (or inside `tx` when it already is one). */
export async function seedDemoData(tx: Tx = db, options: SeedOptions = {}): Promise<SeedSummary> {
  const isTransaction = typeof (tx as { rollback?: unknown }).rollback === 'function';
  return isTransaction ? seedIn(tx, options) : tx.transaction((t) => seedIn(t, options));
}

// ---------------------------------------------------------------------------------------------
// Fixed shape of the demo world
// ---------------------------------------------------------------------------------------------

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const TARGET_MESSAGES = 2_000;
const CHUNK = 500;

type Service = { name: string; price: number; color?: boolean };
type BizDef = {
  key: string;
  name: string;
  externalId: string;
  timezone: string;
  smsNumber: string;
  fromEmail: string;
  fromName: string;
  site: string;
  settings: BusinessSettings;
  locations: { externalId: string; name: string; short: string; address: string; phone: string }[];
  /** role and location index of each staff member. */
  staff: { role: StaffRole; loc: number }[];
  clientCount: number;
  services: Service[];
  aftercare: string[];
  /** [client question, staff answer] after a visit. */
  aftercareQa: [string, string][];
  marketing: string[];
  inquirySubjects: [string, string][];
};

const BUSINESSES: BizDef[] = [
  {
    key: 'bloom',
    name: 'Bloom Hair Studio',
    externalId: 'plat-biz-1001',
    timezone: 'America/Los_Angeles',
    smsNumber: '+14155550100',
    fromEmail: 'hello@bloomhairstudio.example',
    fromName: 'Bloom Hair Studio',
    site: 'bloomhairstudio.example',
    settings: {
      record_calls: true,
      missed_call_text: "Sorry we missed your call! Text us here and we'll get right back to you. - Bloom Hair Studio",
    },
    locations: [
      {
        externalId: 'plat-loc-2001',
        name: 'Bloom Hair Studio - Mission',
        short: 'our Mission St studio',
        address: '2145 Mission St, San Francisco, CA 94110',
        phone: '+14155550101',
      },
      {
        externalId: 'plat-loc-2002',
        name: 'Bloom Hair Studio - Hayes Valley',
        short: 'our Hayes Valley studio',
        address: '482 Hayes St, San Francisco, CA 94102',
        phone: '+14155550102',
      },
    ],
    staff: [
      { role: 'owner', loc: 0 },
      { role: 'manager', loc: 1 },
      { role: 'staff', loc: 0 },
      { role: 'staff', loc: 0 },
      { role: 'staff', loc: 1 },
    ],
    clientCount: 180,
    services: [
      { name: 'balayage', price: 285, color: true },
      { name: 'root touch-up', price: 120, color: true },
      { name: 'full highlights', price: 240, color: true },
      { name: 'gloss', price: 65, color: true },
      { name: 'haircut and blowout', price: 85 },
      { name: 'blowout', price: 55 },
      { name: 'keratin smoothing treatment', price: 350 },
      { name: 'silk press', price: 110 },
      { name: "men's cut", price: 45 },
    ],
    aftercare: [
      'wait 72 hours before your first wash, use a sulfate-free shampoo and keep the hot tools on low for a week.',
      'rinse with cool water, use the purple shampoo once a week and book your gloss refresh in 6-8 weeks.',
      'no ponytails, clips or tucking behind the ears for 48 hours, and skip the gym until Thursday.',
    ],
    aftercareQa: [
      [
        'Thank you! Is it normal for my scalp to feel a bit tender?',
        "Totally normal for a day or two after lightener. If it's still sore Friday, text us and we'll take a look.",
      ],
      [
        'Love it!! Which purple shampoo do you recommend?',
        'We love the Olaplex No.4P - we have it at the front desk, or any sulfate-free violet shampoo works.',
      ],
      [
        'The color looks a little warmer at home than in the salon, is that ok?',
        'Send us a photo in daylight? If it is too warm we will book you a free toner in the next 2 weeks.',
      ],
    ],
    marketing: [
      'Bloom Hair Studio: add a gloss to any color service for $35 this week only. Book at https://bloomhairstudio.example/book Reply STOP to opt out.',
      'Bloom Hair Studio: we have last-minute openings this Saturday! Blowouts $45. Reply to grab one. Reply STOP to opt out.',
      'Bloom Hair Studio: refer a friend and you both get $25 off your next visit. Reply STOP to opt out.',
    ],
    inquirySubjects: [
      [
        'Bridal hair for an October wedding',
        'I am getting married on October 12 and would love a trial run with one of your stylists. Do you also do hair for bridesmaids (4 of them)? Ideally everyone would be ready by 11am.',
      ],
      [
        'Question about going blonde',
        'I have dark box-dyed hair and would like to go lighter gradually. How many sessions would that take, and roughly what would it cost?',
      ],
      ['Gift card', 'Do you sell gift cards? I would like to get one for my sister for her birthday next week, around $150.'],
    ],
  },
  {
    key: 'lumen',
    name: 'Lumen Skin Clinic',
    externalId: 'plat-biz-1002',
    timezone: 'America/Los_Angeles',
    smsNumber: '+14155550150',
    fromEmail: 'care@lumenskinclinic.example',
    fromName: 'Lumen Skin Clinic',
    site: 'lumenskinclinic.example',
    settings: { record_calls: false, missed_call_text: null },
    locations: [
      {
        externalId: 'plat-loc-2003',
        name: 'Lumen Skin Clinic - Rockridge',
        short: 'the clinic on College Ave',
        address: '5630 College Ave, Oakland, CA 94618',
        phone: '+15105550100',
      },
    ],
    staff: [
      { role: 'owner', loc: 0 },
      { role: 'manager', loc: 0 },
      { role: 'staff', loc: 0 },
    ],
    clientCount: 120,
    services: [
      { name: 'HydraFacial', price: 199 },
      { name: 'chemical peel', price: 150 },
      { name: 'microneedling', price: 325 },
      { name: 'laser hair removal', price: 180 },
      { name: 'LED light therapy facial', price: 95 },
      { name: 'dermaplaning facial', price: 120 },
      { name: 'lash lift', price: 85 },
    ],
    aftercare: [
      'skip retinol and exfoliants for 3 days, wear SPF 30+ every day and avoid hot yoga or saunas for 48 hours.',
      'keep your skin clean and moisturized, no makeup until tomorrow morning, and expect a little redness tonight.',
      'avoid direct sun for a week and do not pick at any flaking - it means the peel is working!',
    ],
    aftercareQa: [
      [
        'Is it normal to still be a little red this morning?',
        'Yes, mild redness for 24-48 hours is normal. A cool compress helps. If you notice swelling or itching, send us a photo.',
      ],
      [
        'Can I wear makeup to a wedding on Saturday?',
        'Yes, by Saturday you are fine - just use clean brushes and a gentle cleanser that night.',
      ],
      [
        'My skin is peeling a lot on day 3, should I worry?',
        'Day 3-4 is peak peeling, totally expected. Keep moisturizing and let it shed on its own.',
      ],
    ],
    marketing: [
      'Lumen Skin Clinic: HydraFacial + LED add-on for $229 (save $65) through Sunday. Book: https://lumenskinclinic.example/book Reply STOP to opt out.',
      'Lumen Skin Clinic: laser hair removal packages are 20% off this month. Reply for details. Reply STOP to opt out.',
    ],
    inquirySubjects: [
      [
        'Question about microneedling',
        'I have some acne scarring on my cheeks. Would microneedling help, and how many sessions would you recommend? Is there any downtime?',
      ],
      [
        'Consultation for melasma',
        'I have melasma on my forehead and upper lip that gets worse in summer. Do you offer consultations, and is there a treatment that is safe for darker skin?',
      ],
      [
        'Lash lift and pregnancy',
        'I am 5 months pregnant - is a lash lift safe? I would love to book one before the baby comes.',
      ],
    ],
  },
];

const CLIENT_TYPE_WEIGHTS: { weight: number; value: ClientType }[] = [
  { weight: 15, value: 'lead' },
  { weight: 25, value: 'new' },
  { weight: 45, value: 'returning' },
  { weight: 15, value: 'vip' },
];
const AREA_CODES = ['415', '628', '510', '650', '408', '925', '707', '831', '213', '310'];
const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const TIMES = ['9:30am', '10:00am', '10:45am', '11:15am', '12:30pm', '1:00pm', '2:30pm', '3:15pm', '4:00pm', '5:30pm', '6:15pm'];

// ---------------------------------------------------------------------------------------------
// Conversation scripts
// ---------------------------------------------------------------------------------------------

type CallKind = 'answered' | 'missed' | 'busy' | 'voicemail' | 'outbound' | 'outbound_no_answer';
type Step = {
  kind: 'text' | 'email' | 'call' | 'note';
  by: UserType;
  text?: string;
  category?: MessageCategory;
  nt?: NotificationType | null;
  /** Minutes after the previous step. */
  gap?: [number, number];
  call?: CallKind;
  /** Probability that the message is flagged. */
  flag?: number;
  /** An automatic answer sent at once, even outside business hours. */
  instant?: boolean;
};
type Episode = { steps: Step[]; subject: string; label?: string; first?: boolean; last?: boolean };
type Ctx = {
  f: Faker;
  biz: BizDef;
  first: string;
  stylist: string;
  location: string;
  svc: Service;
  canSms: boolean;
  canEmail: boolean;
  canCall: boolean;
  optedOutSms: boolean;
};

const text = (by: UserType, t: string, gap: [number, number] = [3, 45], extra: Partial<Step> = {}): Step => ({
  kind: 'text',
  by,
  text: t,
  gap,
  category: 'conversational',
  nt: by === 'client' ? null : 'general',
  ...extra,
});
const client = (t: string, gap: [number, number] = [2, 120], extra: Partial<Step> = {}) => text('client', t, gap, extra);
const staffSays = (t: string, gap: [number, number] = [3, 45], extra: Partial<Step> = {}) => text('staff', t, gap, extra);
const system = (t: string, category: MessageCategory, nt: NotificationType, gap: [number, number] = [1, 5]) =>
  text('system', t, gap, { category, nt });
const note = (t: string, gap: [number, number] = [1, 30], flag = 0.05): Step => ({
  kind: 'note',
  by: 'staff',
  text: t,
  gap,
  flag,
});
const call = (kind: CallKind, gap: [number, number] = [5, 120]): Step => ({
  kind: 'call',
  by: kind.startsWith('outbound') ? 'staff' : 'client',
  call: kind,
  gap,
  category: 'conversational',
  nt: null,
});
const email = (by: UserType, t: string, gap: [number, number] = [10, 240], extra: Partial<Step> = {}): Step => ({
  ...text(by, t, gap, extra),
  kind: 'email',
});

function money(n: number) {
  return `$${n}`;
}

type Script = { weight: (c: Ctx) => number; build: (c: Ctx) => Episode };

const SCRIPTS: Record<string, Script> = {
  confirmation: {
    weight: (c) => (c.canSms || c.canEmail ? 10 : 0),
    build: ({ f, first, stylist, location, svc }) => {
      const when = `${f.helpers.arrayElement(DAYS)} at ${f.helpers.arrayElement(TIMES)}`;
      const steps: Step[] = [
        system(
          `Hi ${first}! You're booked for a ${svc.name} with ${stylist} on ${when} at ${location}. Reply C to confirm or R to reschedule.`,
          'transactional',
          'appointment_confirmation',
        ),
      ];
      if (f.datatype.boolean(0.6)) {
        steps.push(client(f.helpers.arrayElement(['C', 'Confirmed, thank you!', 'Yes! See you then', 'C - thanks!']), [2, 240]));
      }
      return { steps, subject: 'Your appointment is confirmed' };
    },
  },
  reminder: {
    weight: (c) => (c.canSms || c.canEmail ? 14 : 0),
    build: ({ f, first, stylist, svc }) => {
      const time = f.helpers.arrayElement(TIMES);
      const steps: Step[] = [
        system(
          f.helpers.arrayElement([
            `Reminder: your ${svc.name} with ${stylist} is tomorrow at ${time}. Reply C to confirm or R to reschedule.`,
            `Hi ${first}, just a reminder of your ${svc.name} tomorrow at ${time} with ${stylist}. Please arrive 5 minutes early. Reply C to confirm.`,
          ]),
          'reminder',
          'appointment_reminder',
        ),
      ];
      const r = f.number.float({ min: 0, max: 1 });
      if (r < 0.4) {
        steps.push(client(f.helpers.arrayElement(['C', 'Confirmed!', 'C see you tomorrow', 'Yes confirmed, thanks']), [3, 300]));
      } else if (r < 0.7) {
        const day = f.helpers.arrayElement(DAYS);
        const [t1, t2] = f.helpers.arrayElements(TIMES, 2) as [string, string];
        steps.push(
          client(
            f.helpers.arrayElement([
              `Can I move to ${day}?`,
              `R - something came up at work. Do you have anything on ${day}?`,
              `Hi! Any chance we could push to ${day}? So sorry`,
            ]),
            [5, 300],
          ),
          staffSays(`Of course! ${day} we have ${t1} or ${t2} with ${stylist}. Which works better?`),
          client(f.helpers.arrayElement([`${t2} please`, `${t1} works!`, `Let's do ${t2}`]), [2, 90]),
          staffSays(`Done! You're moved to ${day} at ${t2}. See you then, ${first}!`, [1, 20]),
        );
      } else if (r < 0.85) {
        steps.push(
          client(
            f.helpers.arrayElement(['See you tomorrow!', 'Thank you, looking forward to it', 'Yep I will be there']),
            [5, 300],
          ),
        );
      }
      return { steps, subject: 'Appointment reminder' };
    },
  },
  late: {
    weight: (c) => (c.canSms ? 6 : 0),
    build: ({ f, stylist }) => ({
      subject: 'Running late',
      steps: [
        client(
          f.helpers.arrayElement([
            'Running 10 min late, sorry!',
            'Stuck in traffic on the Bay Bridge, be there in 15',
            'Parking now, 5 min away!',
            'So sorry, bus is late - ETA 10 minutes',
          ]),
        ),
        staffSays(
          f.helpers.arrayElement([
            'No worries, see you soon!',
            `Thanks for the heads up! ${stylist} will be ready for you.`,
            'No problem, drive safe!',
          ]),
          [1, 8],
        ),
      ],
    }),
  },
  inquiry: {
    weight: (c) => (c.canSms || c.canEmail ? 4 : 0),
    build: ({ f, biz, first, stylist, svc }) => {
      const day = f.helpers.arrayElement(DAYS);
      const time = f.helpers.arrayElement(TIMES);
      const steps: Step[] = [
        client(
          f.helpers.arrayElement([
            `Hi! How much is a ${svc.name}? Saw your work on Instagram`,
            `Hi, do you do ${svc.name}? What's the price?`,
            `Hello - do you have any openings for a ${svc.name} this week?`,
          ]),
        ),
        staffSays(
          `Hi ${first}! Thanks for reaching out. Our ${svc.name} starts at ${money(svc.price)}${svc.color ? ' (final price depends on length and thickness)' : ''}. Want me to find you a time?`,
          [4, 90],
        ),
      ];
      if (f.datatype.boolean(0.75)) {
        steps.push(
          client(
            f.helpers.arrayElement([
              `Yes please, anything ${day}?`,
              'Do you have anything Saturday morning?',
              'Yes! Evenings work best for me',
            ]),
            [5, 240],
          ),
          staffSays(`${stylist} has ${day} at ${time} open. Shall I book it for you?`, [3, 60]),
        );
        if (f.datatype.boolean(0.8)) {
          steps.push(
            client(f.helpers.arrayElement(['Perfect, book it!', 'Yes please!', 'Great, see you then']), [2, 60]),
            system(
              `You're booked! ${svc.name} with ${stylist} on ${day} at ${time}. ${biz.name}, ${biz.locations[0]!.address}. Reply R to reschedule.`,
              'transactional',
              'appointment_confirmation',
            ),
          );
        }
      }
      return { steps, subject: `Question about ${svc.name}` };
    },
  },
  aftercare: {
    weight: (c) => (c.canSms || c.canEmail ? 7 : 0),
    build: ({ f, biz, first }) => {
      const steps: Step[] = [
        staffSays(`Thanks for coming in today, ${first}! Quick aftercare: ${f.helpers.arrayElement(biz.aftercare)}`, [1, 5], {
          category: 'transactional',
        }),
      ];
      if (f.datatype.boolean(0.45)) {
        const [q, a] = f.helpers.arrayElement(biz.aftercareQa);
        steps.push(client(q, [60, 900], { flag: 0.1 }), staffSays(a, [5, 90]));
      }
      return { steps, subject: 'Your aftercare instructions' };
    },
  },
  review: {
    weight: (c) => (c.canSms || c.canEmail ? 5 : 0),
    build: ({ f, biz, first, stylist, svc }) => {
      const steps: Step[] = [
        system(
          // The same plain ask for everyone: no "if you loved it" (docs/api.md#review-requests: no gating).
          `Hi ${first}, thanks for visiting ${biz.name}! Would you leave us a quick review of your ${svc.name}? https://${biz.site}/review`,
          'campaign',
          'review_request',
        ),
      ];
      if (f.datatype.boolean(0.3)) {
        steps.push(
          client(
            f.helpers.arrayElement([
              `Done! ${stylist} is the best`,
              'Just left one - 5 stars!',
              `Of course! Tell ${stylist} thank you again`,
            ]),
            [30, 600],
          ),
          staffSays(`Thank you so much, ${first}! That means a lot to us.`, [5, 120]),
        );
      }
      return { steps, subject: `How was your visit to ${biz.name}?` };
    },
  },
  marketing: {
    // Opted-out clients get their marketing text in the STOP episode.
    weight: (c) => (c.canSms && !c.optedOutSms ? 4 : 0),
    build: ({ f, biz }) => {
      const steps: Step[] = [system(f.helpers.arrayElement(biz.marketing), 'campaign', 'marketing')];
      if (f.datatype.boolean(0.15)) {
        steps.push(
          client(
            f.helpers.arrayElement(['Ooh can I add that to my appointment next week?', 'Is this still available Saturday?']),
            [20, 600],
          ),
          staffSays('Absolutely - I added it to your booking!', [5, 120]),
        );
      }
      return { steps, subject: 'This week only' };
    },
  },
  notes: {
    weight: () => 5,
    build: ({ f, stylist, svc, biz }) => {
      const lines =
        biz.key === 'bloom'
          ? [
              `Prefers ${stylist}, allergic to PPD - ammonia-free line only`,
              'Formula: 6N + 7G 1:1 with 20 vol, gloss 9V. 45 min processing.',
              'Patch test done today - no reaction',
              'Always runs a little late - book with a 15 min buffer',
              'Sensitive scalp, use the scalp protector before lightener',
              `Wants to go 2 shades lighter by summer, next step: ${svc.name}`,
            ]
          : [
              'Client mentioned sensitivity to retinol - no glycolic peels',
              'On Accutane until next month, postpone microneedling',
              `Prefers ${stylist}. Fitzpatrick type III.`,
              'Paid $50 deposit for the package, 2 of 6 sessions used',
              'Allergic to lidocaine - do NOT use numbing cream',
            ];
      const steps: Step[] = [note(f.helpers.arrayElement(lines), [0, 0], 0.25)];
      if (f.datatype.boolean(0.25)) steps.push(note(f.helpers.arrayElement(lines), [60, 2000]));
      return { steps, subject: '' };
    },
  },
  emailInquiry: {
    weight: (c) => (c.canEmail ? 4 : 0),
    build: ({ f, biz, first, stylist }) => {
      const [subject, body] = f.helpers.arrayElement(biz.inquirySubjects);
      const steps: Step[] = [
        email('client', `Hi there,\n\n${body}\n\nThanks so much,\n${first}`, [0, 0]),
        email(
          'staff',
          `Hi ${first},\n\nThanks for getting in touch! ${f.helpers.arrayElement([
            `${stylist} would be a great fit for this and has openings next week.`,
            'We would love to help. The best first step is a free 15 minute consultation.',
            'Yes, we can definitely help with that.',
          ])} You can book online at https://${biz.site}/book or just reply with a few times that work for you.\n\nWarmly,\n${stylist}\n${biz.name}`,
          [20, 300],
        ),
      ];
      if (f.datatype.boolean(0.5)) {
        steps.push(
          email('client', `Perfect, ${f.helpers.arrayElement(DAYS)} afternoon works for me. Thank you!\n\n${first}`, [60, 900]),
          email(
            'staff',
            `Great, you're all set for ${f.helpers.arrayElement(DAYS)} at ${f.helpers.arrayElement(TIMES)}. See you then!\n\n${stylist}`,
            [10, 120],
          ),
        );
      }
      return { steps, subject };
    },
  },
  billing: {
    weight: (c) => (c.canSms || c.canEmail ? 2 : 0),
    build: ({ f, first, svc }) => ({
      subject: 'Double charge?',
      label: 'Billing',
      steps: [
        client(
          f.helpers.arrayElement([
            `Hi, I think I was charged twice for my ${svc.name} on ${f.helpers.arrayElement(DAYS)}. Can you check?`,
            'Hello, my receipt shows a different amount than I was quoted. Can someone call me?',
          ]),
          [0, 0],
          { flag: 0.6 },
        ),
        staffSays(`So sorry about that, ${first}! Let me look into it right now.`, [5, 60]),
        note(`Refunded duplicate charge of ${money(svc.price)} in Square`, [5, 40]),
        staffSays('Found it - the duplicate charge has been refunded. It should show up in 3-5 business days.', [1, 10]),
        client(f.helpers.arrayElement(['Thank you!', 'Thanks for sorting that out so quickly']), [5, 240]),
      ],
    }),
  },
  cancel: {
    weight: (c) => (c.canSms || c.canEmail ? 3 : 0),
    build: ({ f }) => {
      const steps: Step[] = [
        client(
          f.helpers.arrayElement([
            'Hi, I need to cancel tomorrow, my son is sick :(',
            'So sorry but I have to cancel my appointment on Friday, work trip came up',
            "I won't be able to make it today, I'm really sorry",
          ]),
          [0, 0],
        ),
        staffSays(
          "Sorry to hear that! I've cancelled it - no fee since you let us know ahead. Want to rebook for next week?",
          [5, 90],
        ),
      ];
      if (f.datatype.boolean(0.6)) {
        steps.push(
          client('Yes, next week same time if possible', [10, 300]),
          staffSays(`You're booked for next ${f.helpers.arrayElement(DAYS)} at ${f.helpers.arrayElement(TIMES)}.`, [3, 60]),
        );
      }
      return { steps, subject: 'Cancelling my appointment' };
    },
  },
  rebook: {
    weight: (c) => (c.canSms || c.canEmail ? 4 : 0),
    build: ({ f, first, stylist, svc }) => {
      const steps: Step[] = [
        system(
          `Hi ${first}, it's been about 8 weeks since your last ${svc.name} with ${stylist}. Want us to save you a spot? Just reply with a day that works.`,
          'reminder',
          'general',
        ),
      ];
      if (f.datatype.boolean(0.5)) {
        const time = f.helpers.arrayElement(TIMES);
        steps.push(
          client(
            f.helpers.arrayElement([
              'Yes! Any Friday afternoon?',
              'Yes please, next Tuesday?',
              'Not yet, will text you next month',
            ]),
            [30, 900],
          ),
          staffSays(`${stylist} can do ${time} - I'll pencil you in!`, [5, 120]),
        );
      }
      return { steps, subject: 'Time for your next visit?' };
    },
  },
  patchTest: {
    weight: (c) => (c.biz.key === 'bloom' && c.canSms ? 2 : 0),
    build: ({ f, first }) => ({
      subject: 'Patch test',
      label: 'Color',
      steps: [
        staffSays(
          `Hi ${first}, since it's your first color with us we'll need a quick patch test 48 hours before. Can you pop in ${f.helpers.arrayElement(DAYS)}?`,
          [0, 0],
        ),
        client('Sure, I can come by on my lunch break', [10, 240]),
        note('Patch test booked, client has had a reaction to box dye before', [2, 30], 0.4),
      ],
    }),
  },
  callAnswered: {
    weight: (c) => (c.canCall ? 4 : 0),
    build: ({ f, svc }) => {
      const steps: Step[] = [call('answered', [0, 0])];
      if (f.datatype.boolean(0.5))
        steps.push(note(`Called about ${svc.name} pricing and availability, sent options by text`, [2, 15]));
      return { steps, subject: '' };
    },
  },
  missedCall: {
    weight: (c) => (c.canCall ? 3 : 0),
    build: ({ f, biz, first, svc, canSms }) => {
      const steps: Step[] = [call(f.datatype.boolean(0.8) ? 'missed' : 'busy', [0, 0])];
      if (biz.settings.missed_call_text && canSms) {
        steps.push({ ...system(biz.settings.missed_call_text, 'conversational', 'general', [0, 1]), instant: true });
        if (f.datatype.boolean(0.6)) {
          steps.push(
            client(`Hi! I wanted to book a ${svc.name} for next week`, [2, 30]),
            staffSays(
              `Hi ${first}! Happy to help - does ${f.helpers.arrayElement(DAYS)} at ${f.helpers.arrayElement(TIMES)} work?`,
              [5, 60],
            ),
          );
        }
      } else if (f.datatype.boolean(0.5)) {
        steps.push(call(f.datatype.boolean(0.7) ? 'outbound' : 'outbound_no_answer', [10, 180]));
      }
      return { steps, subject: '' };
    },
  },
  voicemail: {
    weight: (c) => (c.canCall ? 2 : 0),
    build: ({ f }) => {
      const steps: Step[] = [call('voicemail', [0, 0])];
      if (f.datatype.boolean(0.7)) {
        steps.push(
          call('outbound', [15, 240]),
          note(`Called back re: voicemail, rebooked for ${f.helpers.arrayElement(DAYS)}`, [1, 10]),
        );
      }
      return { steps, subject: '' };
    },
  },
  outboundCall: {
    weight: (c) => (c.canCall ? 2 : 0),
    build: ({ f }) => {
      const answered = f.datatype.boolean(0.7);
      const steps: Step[] = [call(answered ? 'outbound' : 'outbound_no_answer', [0, 0])];
      steps.push(
        note(
          answered
            ? f.helpers.arrayElement([
                'Confirmed deposit and consult notes by phone',
                'Went over pricing for the package, she will think about it',
              ])
            : 'Tried to call to confirm, no answer - left voicemail',
          [1, 10],
        ),
      );
      return { steps, subject: '' };
    },
  },
};

/** Opted-out clients: their last SMS exchange is the STOP (and, sometimes, a later send refused). */
function stopEpisode(c: Ctx): Episode {
  const steps: Step[] = [
    system(c.f.helpers.arrayElement(c.biz.marketing), 'campaign', 'marketing'),
    client(c.f.helpers.arrayElement(['STOP', 'Stop', 'STOP please']), [5, 300]),
  ];
  if (c.f.datatype.boolean(0.5)) {
    steps.push(
      system(
        `Reminder: your ${c.svc.name} with ${c.stylist} is tomorrow at ${c.f.helpers.arrayElement(TIMES)}. Reply C to confirm.`,
        'reminder',
        'appointment_reminder',
        [600, 2400],
      ),
    );
  }
  return { steps, subject: '', last: true };
}

function optInEpisode(c: Ctx): Episode {
  return {
    first: true,
    subject: `Welcome to ${c.biz.name}`,
    steps: [
      system(
        `${c.biz.name}: you're subscribed to appointment texts. Msg & data rates may apply. Reply STOP to opt out, HELP for help.`,
        'transactional',
        'notification_opt_in',
      ),
    ],
  };
}

/** Keeps the steps the client can receive: SMS become email when there is no usable number. */
function adapt(ep: Episode, c: Ctx): Step[] {
  const out: Step[] = [];
  for (const s of ep.steps) {
    if (s.kind === 'text' && !c.canSms) {
      if (c.canEmail) out.push({ ...s, kind: 'email' });
    } else if (s.kind === 'email' && !c.canEmail) {
      continue;
    } else if (s.kind === 'call' && !c.canCall) {
      continue;
    } else {
      out.push(s);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Time helpers (business-local wall time)
// ---------------------------------------------------------------------------------------------

const formatters = new Map<string, Intl.DateTimeFormat>();
function localParts(ms: number, tz: string) {
  let fmt = formatters.get(tz);
  if (!fmt) {
    fmt = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    });
    formatters.set(tz, fmt);
  }
  const parts = fmt.formatToParts(new Date(ms));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return { y: get('year'), mo: get('month'), d: get('day'), h: get('hour') % 24, mi: get('minute') };
}
function zoned(y: number, mo: number, d: number, h: number, mi: number, tz: string): number {
  const guess = Date.UTC(y, mo - 1, d, h, mi);
  const offsetAt = (t: number) => {
    const p = localParts(t, tz);
    return Date.UTC(p.y, p.mo - 1, p.d, p.h, p.mi) - Math.floor(t / MIN) * MIN;
  };
  let t = guess - offsetAt(guess);
  const again = offsetAt(t);
  if (guess - again !== t) t = guess - again;
  return t;
}

// ---------------------------------------------------------------------------------------------
// Seeding
// ---------------------------------------------------------------------------------------------

type StaffPlan = { biz: number; loc: number; role: StaffRole; first: string; id: number };
type ClientPlan = {
  biz: number;
  loc: number;
  externalId: string;
  first: string;
  name: string;
  phone: string | null;
  email: string | null;
  gender: string | null;
  type: ClientType;
  ageDays: number;
  optedOutSms: boolean;
  optedOutEmail: boolean;
  id: number;
};
type Draft = {
  kind: MessageType;
  step: Step;
  staff: number | null; // index into staffPlans
  at: number;
  subject: string | null;
  replyTo: boolean; // another message answers this one in the same episode
};
type ConvPlan = {
  client: ClientPlan;
  assigned: number | null;
  main: number; // staff index the client usually sees
  episodes: Episode[];
  drafts: Draft[];
  anchorRecent: boolean;
  id: number;
};

async function chunked<T>(rows: T[], fn: (chunk: T[]) => Promise<unknown>) {
  for (let i = 0; i < rows.length; i += CHUNK) await fn(rows.slice(i, i + CHUNK));
}

function segmentsOf(content: string) {
  // GSM-7 basic set (extension characters counted as one, close enough for demo data).
  const gsm = /^[@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&'()*+,\-./0-9:;<=>?¡A-ZÄÖÑÜ§¿a-zäöñüà^{}\\[~\]|€]*$/;
  if (gsm.test(content)) return { encoding: 'GSM-7', segments: content.length <= 160 ? 1 : Math.ceil(content.length / 153) };
  return { encoding: 'UCS-2', segments: content.length <= 70 ? 1 : Math.ceil(content.length / 67) };
}

async function seedIn(tx: Tx, options: SeedOptions): Promise<SeedSummary> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext('convo-seed-demo-data'))`);
  if (await databaseHasData(tx)) throw new Error('database already has data');

  const f = new Faker({ locale: [en, base] });
  f.seed(options.seed ?? 42);
  const now = (options.now ?? new Date()).getTime();
  const weekStart = now - 7 * DAY;

  // ---- businesses, numbers, senders, locations
  const bizIds: number[] = [];
  const locIds: number[][] = [];
  for (const b of BUSINESSES) {
    const [row] = await tx
      .insert(businesses)
      .values({
        externalId: b.externalId,
        name: b.name,
        timezone: b.timezone,
        country: 'US',
        fromEmail: b.fromEmail,
        fromName: b.fromName,
        settings: b.settings,
        onboardingStatus: 'completed',
        createdAt: new Date(now - 400 * DAY),
        updatedAt: new Date(now - 30 * DAY),
      })
      .returning({ id: businesses.id });
    const businessId = row!.id;
    bizIds.push(businessId);
    await tx.insert(businessSmsNumbers).values({ businessId, phoneNumber: b.smsNumber, isDefault: true });
    await tx.insert(businessEmailSenders).values({ businessId, email: b.fromEmail, name: b.fromName, isDefault: true });
    const locRows = await tx
      .insert(locations)
      .values(
        b.locations.map((l) => ({
          businessId,
          externalId: l.externalId,
          name: l.name,
          address: l.address,
          phoneNumber: l.phone,
          timezone: b.timezone,
        })),
      )
      .returning({ id: locations.id, externalId: locations.externalId });
    locIds.push(b.locations.map((l) => locRows.find((r) => r.externalId === l.externalId)!.id));
    await tx.insert(savedReplies).values(DEMO_SAVED_REPLIES.map((r) => ({ businessId, ...r })));
  }

  // ---- phone number pool: fictional 555-01xx numbers, minus the businesses' own
  const reserved = new Set(BUSINESSES.flatMap((b) => [b.smsNumber, ...b.locations.map((l) => l.phone)]));
  const pool = f.helpers
    .shuffle(AREA_CODES.flatMap((area) => Array.from({ length: 100 }, (_, i) => `+1${area}55501${String(i).padStart(2, '0')}`)))
    .filter((n) => !reserved.has(n));
  const takePhone = () => pool.pop()!;
  const usedEmails = new Set<string>();
  const emailFor = (first: string, last: string, domain?: string) => {
    for (let i = 0; ; i++) {
      const e = f.internet
        .email({
          firstName: first,
          lastName: last,
          provider: domain ?? f.helpers.arrayElement(['example.com', 'example.net', 'example.org']),
        })
        .toLowerCase();
      if (!usedEmails.has(e)) {
        usedEmails.add(e);
        return e;
      }
      if (i > 20) throw new Error('could not make a unique email');
    }
  };

  // ---- staff
  const staffPlans: StaffPlan[] = [];
  const staffRows: (typeof staff.$inferInsert)[] = [];
  let staffSeq = 3001;
  BUSINESSES.forEach((b, bi) => {
    for (const s of b.staff) {
      const sex = f.datatype.boolean(0.8) ? 'female' : 'male';
      const first = f.person.firstName(sex);
      const last = f.person.lastName();
      staffPlans.push({ biz: bi, loc: s.loc, role: s.role, first, id: 0 });
      staffRows.push({
        businessId: bizIds[bi]!,
        externalId: `plat-staff-${staffSeq++}`,
        name: `${first} ${last}`,
        email: emailFor(first, last, b.site),
        phoneNumber: takePhone(),
        gender: sex,
        imageUrl: null,
        role: s.role,
        locationId: locIds[bi]![s.loc]!,
        active: true,
        createdAt: new Date(now - f.number.int({ min: 60, max: 380 }) * DAY),
      });
    }
  });
  const insertedStaff = await tx.insert(staff).values(staffRows).returning({ id: staff.id, externalId: staff.externalId });
  staffRows.forEach((r, i) => (staffPlans[i]!.id = insertedStaff.find((s) => s.externalId === r.externalId)!.id));

  // ---- clients
  const clientPlans: ClientPlan[] = [];
  let clientSeq = 5001;
  BUSINESSES.forEach((b, bi) => {
    for (let i = 0; i < b.clientCount; i++) {
      const sex = f.datatype.boolean(b.key === 'bloom' ? 0.75 : 0.8) ? 'female' : 'male';
      const first = f.person.firstName(sex);
      const last = f.person.lastName();
      const phone = f.datatype.boolean(0.9) ? takePhone() : null;
      const mail = f.datatype.boolean(0.8) ? emailFor(first, last) : null;
      const type = f.helpers.weightedArrayElement(CLIENT_TYPE_WEIGHTS);
      const ageDays =
        type === 'lead'
          ? f.number.float({ min: 7.2, max: 10 })
          : type === 'new'
            ? f.number.float({ min: 8, max: 60 })
            : f.number.float({ min: 90, max: 900 });
      clientPlans.push({
        biz: bi,
        loc: b.locations.length > 1 && f.datatype.boolean(0.45) ? 1 : 0,
        externalId: `plat-client-${clientSeq++}`,
        first,
        name: `${first} ${last}`,
        phone,
        email: mail,
        gender: f.datatype.boolean(0.95) ? sex : null,
        type,
        ageDays,
        optedOutSms: false,
        optedOutEmail: false,
        id: 0,
      });
    }
  });
  // A handful of opt-outs: 6 from SMS, 4 from email.
  for (const c of f.helpers.arrayElements(
    clientPlans.filter((c) => c.phone),
    6,
  ))
    c.optedOutSms = true;
  for (const c of f.helpers.arrayElements(
    clientPlans.filter((c) => c.email),
    4,
  ))
    c.optedOutEmail = true;
  const clientRows: (typeof clients.$inferInsert)[] = clientPlans.map((c) => ({
    businessId: bizIds[c.biz]!,
    externalId: c.externalId,
    name: c.name,
    email: c.email,
    phoneNumber: c.phone,
    gender: c.gender,
    imageUrl: null,
    clientType: c.type,
    locationId: locIds[c.biz]![c.loc]!,
    createdAt: new Date(now - c.ageDays * DAY),
    updatedAt: new Date(now - Math.min(c.ageDays, 8) * DAY),
  }));
  const clientIdByExt = new Map<string, number>();
  await chunked(clientRows, async (chunk) => {
    const rows = await tx.insert(clients).values(chunk).returning({ id: clients.id, externalId: clients.externalId });
    for (const r of rows) clientIdByExt.set(r.externalId!, r.id);
  });
  for (const c of clientPlans) c.id = clientIdByExt.get(c.externalId)!;
  // Opt-outs are kept by address (docs/api.md#opt-out).
  const optOutRows: (typeof optOuts.$inferInsert)[] = clientPlans.flatMap((c) => [
    ...(c.optedOutSms && c.phone
      ? [{ businessId: bizIds[c.biz]!, channel: 'sms' as const, address: c.phone, source: 'keyword' as const }]
      : []),
    ...(c.optedOutEmail && c.email
      ? [
          {
            businessId: bizIds[c.biz]!,
            channel: 'email' as const,
            address: c.email.toLowerCase(),
            source: 'provider_error' as const,
          },
        ]
      : []),
  ]);
  if (optOutRows.length) {
    // Each with its history record, as suppression.ts writes them (docs/api.md#opt-out).
    const added = await tx.insert(optOuts).values(optOutRows).onConflictDoNothing().returning();
    if (added.length)
      await tx.insert(optOutEvents).values(added.map(({ id: _, ...o }) => ({ ...o, action: 'opt_out' as const })));
  }

  // ---- conversations: plan episodes per client
  const staffOf = (bi: number) => staffPlans.map((s, i) => ({ s, i })).filter(({ s }) => s.biz === bi);
  const convs: ConvPlan[] = [];
  for (const c of clientPlans) {
    if (!c.phone && !c.email) continue;
    if (c.type !== 'lead' && !f.datatype.boolean(0.86)) continue;
    const team = staffOf(c.biz);
    const local = team.filter(({ s }) => s.loc === c.loc || s.role !== 'staff');
    // The stylist / esthetician the client usually sees: someone at their location other than the owner.
    const usual = team.filter(({ s }) => s.loc === c.loc && s.role !== 'owner');
    const main = f.helpers.arrayElement(usual.length ? usual : team).i;
    const assigned = f.datatype.boolean(0.5) ? (f.datatype.boolean(0.7) ? main : f.helpers.arrayElement(local).i) : null;
    convs.push({ client: c, assigned, main, episodes: [], drafts: [], anchorRecent: false, id: 0 });
  }

  const ctxFor = (cv: ConvPlan): Ctx => {
    const c = cv.client;
    const biz = BUSINESSES[c.biz]!;
    return {
      f,
      biz,
      first: c.first,
      stylist: staffPlans[cv.main]!.first,
      location: biz.locations[c.loc]!.short,
      svc: f.helpers.arrayElement(biz.services.filter((s) => c.gender === 'male' || !s.name.startsWith("men's"))),
      // Opted-out clients texted normally until their STOP, which is always their last episode.
      canSms: c.phone !== null,
      canEmail: c.email !== null && !c.optedOutEmail,
      canCall: c.phone !== null,
      optedOutSms: c.optedOutSms,
    };
  };
  const pickEpisode = (cv: ConvPlan): Episode | null => {
    const ctx = ctxFor(cv);
    const weighted = Object.values(SCRIPTS)
      .map((s) => ({ weight: s.weight(ctx), value: s }))
      .filter((w) => w.weight > 0);
    if (!weighted.length) return null;
    for (let attempt = 0; attempt < 5; attempt++) {
      const ep = f.helpers.weightedArrayElement(weighted).build(ctx);
      const steps = adapt(ep, ctx);
      if (steps.length) return { ...ep, steps };
    }
    return null;
  };
  let total = 0;
  for (const cv of convs) {
    const ctx = ctxFor(cv);
    let first: Episode | null;
    if (cv.client.type === 'lead') first = { ...SCRIPTS.inquiry!.build(ctx), first: true };
    else if (cv.client.type === 'new' && ctx.canSms && f.datatype.boolean(0.4)) first = optInEpisode(ctx);
    else first = pickEpisode(cv);
    if (first) {
      first = { ...first, steps: adapt(first, ctx) };
      if (first.steps.length) cv.episodes.push(first);
    }
    if (cv.client.optedOutSms) {
      const stop = stopEpisode(ctx);
      cv.episodes.push({ ...stop, steps: adapt(stop, ctx) });
    }
    total += cv.episodes.reduce((n, e) => n + e.steps.length, 0);
  }
  const busyWeight = (cv: ConvPlan) =>
    cv.client.type === 'vip' ? 4 : cv.client.type === 'returning' ? 3 : cv.client.type === 'new' ? 2 : 1;
  const weightedConvs = convs.map((cv) => ({ weight: busyWeight(cv), value: cv }));
  for (let guard = 0; total < TARGET_MESSAGES && guard < 10_000; guard++) {
    const cv = f.helpers.weightedArrayElement(weightedConvs);
    if (cv.episodes.length >= 12) continue;
    const ep = pickEpisode(cv);
    if (!ep) continue;
    const lastIdx = cv.episodes.findIndex((e) => e.last);
    if (lastIdx >= 0) cv.episodes.splice(lastIdx, 0, ep);
    else cv.episodes.push(ep);
    total += ep.steps.length;
  }
  // A lead's inquiry and a new client's opt-in come first, a STOP last; the rest of the week is shuffled.
  for (const cv of convs) {
    const first = cv.episodes.filter((e) => e.first);
    const last = cv.episodes.filter((e) => e.last);
    const middle = f.helpers.shuffle(cv.episodes.filter((e) => !e.first && !e.last));
    cv.episodes = [...first, ...middle, ...last];
  }

  // ---- timelines
  /** Lays the conversation's episodes out between the start of the week and `windowEnd`. */
  const layout = (cv: ConvPlan, windowEnd: number): Draft[] => {
    const drafts: Draft[] = [];
    const tz = BUSINESSES[cv.client.biz]!.timezone;
    const team = staffOf(cv.client.biz);
    const from = weekStart + 30 * MIN;
    const slot = (windowEnd - from) / Math.max(cv.episodes.length, 1);
    let cursor = from;
    cv.episodes.forEach((ep, ei) => {
      // Who answers this episode: the assignee, else the client's usual person or the front desk.
      const author =
        cv.assigned ??
        (f.datatype.boolean(0.6)
          ? cv.main
          : f.helpers.arrayElement(team.filter(({ s }) => s.loc === cv.client.loc || s.role === 'manager')).i);
      let t = Math.max(from + slot * (ei + f.number.float({ min: 0, max: 0.7 })), cursor + 20 * MIN);
      const start = drafts.length;
      ep.steps.forEach((step, si) => {
        if (si > 0) {
          const [a, b] = step.gap ?? [3, 45];
          t += f.number.float({ min: a, max: Math.max(a, b) }) * MIN + f.number.int({ min: 0, max: 59 }) * 1000;
        }
        const p = localParts(t, tz);
        const hm = p.h + p.mi / 60;
        if (step.by !== 'client' && !step.instant) {
          // Staff and automations work in business hours (9:00 to 19:00).
          if (hm < 9 || hm >= 19) {
            // An episode starts any time of the working day; a late reply waits for the morning.
            const minutes = si === 0 ? f.number.int({ min: 0, max: 590 }) : f.number.int({ min: 0, max: 150 });
            const snapped = zoned(p.y, p.mo, p.d + (hm >= 19 ? 1 : 0), 9, minutes, tz) + f.number.int({ min: 0, max: 59 }) * 1000;
            if (snapped < now - 10 * MIN) t = snapped;
          }
        } else if (hm < 7) {
          // Clients text late, but rarely before 7am.
          t = zoned(p.y, p.mo, p.d, 7, f.number.int({ min: 0, max: 90 }), tz) + f.number.int({ min: 0, max: 59 }) * 1000;
        }
        const kind: MessageType =
          step.kind === 'text' ? 'TEXT' : step.kind === 'email' ? 'EMAIL' : step.kind === 'call' ? 'CALL' : 'NOTE';
        const staffIdx =
          step.kind === 'note' || step.by === 'staff' || (step.kind === 'call' && step.call === 'answered') ? author : null;
        const prev = drafts[drafts.length - 1];
        if (prev && si > 0 && step.by === 'client') prev.replyTo = true;
        const earlierEmail = drafts.slice(start).some((d) => d.kind === 'EMAIL');
        drafts.push({
          kind,
          step,
          staff: staffIdx,
          at: t,
          subject: kind === 'EMAIL' ? (earlierEmail ? `Re: ${ep.subject}` : ep.subject) : null,
          replyTo: false,
        });
      });
      cursor = t;
    });
    return drafts;
  };
  const recentConvs = new Set(f.helpers.arrayElements(convs, Math.max(3, Math.round(convs.length * 0.03))));
  const limit = now - MIN;
  for (const cv of convs) {
    // Nothing may be in the future: a thread that runs over is laid out again in a shorter window.
    let windowEnd = now - HOUR;
    cv.drafts = layout(cv, windowEnd);
    for (let attempt = 0; attempt < 6; attempt++) {
      const lastAt = cv.drafts[cv.drafts.length - 1]?.at ?? 0;
      if (lastAt <= limit) break;
      windowEnd -= lastAt - limit + 2 * HOUR;
      if (windowEnd < weekStart + DAY) break;
      cv.drafts = layout(cv, windowEnd);
    }
    if (!cv.drafts.length) continue;
    const firstAt = cv.drafts[0]!.at;
    const lastDraft = cv.drafts[cv.drafts.length - 1]!;
    if (lastDraft.at > limit) {
      // Last resort: squeeze the thread linearly (keeps its order).
      const newFirst = Math.max(weekStart + 10 * MIN, Math.min(firstAt, limit - 10 * MIN * cv.drafts.length));
      const scale = lastDraft.at === firstAt ? 0 : (limit - newFirst) / (lastDraft.at - firstAt);
      for (const d of cv.drafts) d.at = Math.round(newFirst + (d.at - firstAt) * scale);
    }
    // A few staff members sent their last message a moment ago (still queued).
    cv.anchorRecent =
      recentConvs.has(cv) && lastDraft.step.by === 'staff' && (lastDraft.kind === 'TEXT' || lastDraft.kind === 'EMAIL');
    if (cv.anchorRecent) lastDraft.at = now - f.number.int({ min: 30, max: 240 }) * 1000;
  }

  // A client nobody can reach and nobody wrote a note about has no conversation.
  convs.splice(0, convs.length, ...convs.filter((cv) => cv.drafts.length > 0));

  // ---- read state, conversation status
  type ConvRow = typeof conversations.$inferInsert;
  const convRows: ConvRow[] = [];
  const readFlags = new Map<Draft, boolean>();
  for (const cv of convs) {
    const team = staffOf(cv.client.biz);
    const staffTimes = cv.drafts.filter((d) => d.staff !== null).map((d) => d.at);
    const lastStaffAt = staffTimes.length ? Math.max(...staffTimes) : null;
    const r = f.number.float({ min: 0, max: 1 });
    const cutoff =
      r < 0.4
        ? now
        : r < 0.93
          ? Math.max(lastStaffAt ?? 0, now - 36 * HOUR + f.number.int({ min: 0, max: 12 }) * HOUR)
          : (lastStaffAt ?? now - 3 * DAY);
    let unread = 0;
    for (const d of cv.drafts) {
      const inbound = d.step.by === 'client';
      const read = !inbound || d.staff !== null || d.at <= cutoff;
      readFlags.set(d, read);
      if (inbound && !read) unread++;
    }
    let status: ConversationStatus;
    if (unread > 0) status = f.datatype.boolean(0.85) ? 'open' : 'pending';
    else
      status = f.helpers.weightedArrayElement([
        { weight: 45, value: 'open' as const },
        { weight: 20, value: 'pending' as const },
        { weight: 28, value: 'resolved' as const },
        { weight: 7, value: 'snoozed' as const },
      ]);
    const actor = cv.assigned ?? f.helpers.arrayElement(team).i;
    const labels = cv.episodes.map((e) => e.label).filter((l): l is string => !!l);
    const svcLabel =
      labels.length && f.datatype.boolean(0.7)
        ? labels[0]!
        : cv.client.type === 'vip' && f.datatype.boolean(0.4)
          ? 'VIP'
          : f.datatype.boolean(0.04)
            ? 'Follow-up'
            : cv.client.biz === 0 && f.datatype.boolean(0.03)
              ? 'Color'
              : null;
    convRows.push({
      businessId: bizIds[cv.client.biz]!,
      clientId: cv.client.id,
      locationId: locIds[cv.client.biz]![cv.client.loc]!,
      status,
      snoozedUntil: status === 'snoozed' ? new Date(now + f.number.int({ min: 2, max: 72 }) * HOUR) : null,
      assignedStaffId: cv.assigned === null ? null : staffPlans[cv.assigned]!.id,
      resolvedByStaffId: status === 'resolved' ? staffPlans[actor]!.id : null,
      updatedByStaffId: status === 'open' ? null : staffPlans[actor]!.id,
      label: svcLabel,
      createdAt: new Date(cv.drafts[0]?.at ?? now),
      lastActivityAt: new Date(cv.drafts[cv.drafts.length - 1]?.at ?? now),
    });
  }
  const convIdByClient = new Map<number, number>();
  await chunked(convRows, async (chunk) => {
    const rows = await tx
      .insert(conversations)
      .values(chunk)
      .returning({ id: conversations.id, clientId: conversations.clientId });
    for (const r of rows) convIdByClient.set(r.clientId, r.id);
  });
  for (const cv of convs) cv.id = convIdByClient.get(cv.client.id)!;

  // ---- messages, in time order so ids grow with sent_at
  const usedIds = new Set<string>();
  const sid = (prefix: string) => {
    for (;;) {
      const id = prefix + f.string.hexadecimal({ length: 32, casing: 'lower', prefix: '' });
      if (!usedIds.has(id)) {
        usedIds.add(id);
        return id;
      }
    }
  };
  const accountSid = `AC${f.string.hexadecimal({ length: 32, casing: 'lower', prefix: '' })}`;
  type MsgRow = typeof messages.$inferInsert;
  const all: { at: number; row: MsgRow }[] = [];
  for (const cv of convs) {
    const c = cv.client;
    const biz = BUSINESSES[c.biz]!;
    const businessId = bizIds[c.biz]!;
    let lastEmailId: string | null = null;
    for (const d of cv.drafts) {
      const s = d.step;
      const inbound = s.by === 'client';
      const isNote = d.kind === 'NOTE';
      const channel: Channel | null =
        d.kind === 'TEXT' ? 'sms' : d.kind === 'EMAIL' ? 'email' : d.kind === 'CALL' ? 'voice' : null;
      const staffId = d.staff === null ? null : staffPlans[d.staff]!.id;
      const age = now - d.at;
      const row: MsgRow = {
        businessId,
        conversationId: cv.id,
        clientId: c.id,
        channel,
        direction: inbound ? 'inbound' : 'outbound',
        messageType: d.kind,
        category: s.category ?? 'conversational',
        notificationType: isNote || inbound ? null : (s.nt ?? null),
        senderType: s.by,
        senderId: inbound ? c.id : staffId,
        receiverType: inbound || isNote ? null : 'client',
        receiverId: inbound || isNote ? null : c.id,
        staffId,
        sentBy: !inbound && staffId !== null ? staffId : null,
        content: d.kind === 'CALL' ? null : (s.text ?? null),
        subject: d.subject,
        isRead: readFlags.get(d) ?? true,
        flagged: f.datatype.boolean(s.flag ?? (inbound ? 0.03 : 0.01)),
        sentAt: new Date(d.at),
        createdAt: new Date(d.at),
        statusUpdatedAt: new Date(d.at),
        attempts: 0,
        status: 'sent',
        origin: inbound || d.kind === 'CALL' ? 'webhook' : isNote ? 'system' : 'send',
      };
      let status: MessageStatus;
      if (isNote) {
        status = 'sent';
      } else if (d.kind === 'CALL') {
        const kind = s.call ?? 'answered';
        row.provider = 'sandbox';
        row.providerMessageId = sid('CA');
        row.fromAddress = inbound ? c.phone : biz.smsNumber;
        row.toAddress = inbound ? biz.smsNumber : c.phone;
        if (kind === 'answered' || kind === 'outbound') {
          status = 'completed';
          row.callDurationSeconds = f.number.int({ min: 35, max: 720 });
          if (biz.settings.record_calls) {
            row.recordingUrl = `https://api.twilio.com/2010-04-01/Accounts/${accountSid}/Recordings/${sid('RE')}.mp3`;
          }
        } else if (kind === 'voicemail') {
          status = 'no_answer';
          row.callOutcome = 'voicemail';
          row.callDurationSeconds = f.number.int({ min: 12, max: 75 });
          row.recordingUrl = `https://api.twilio.com/2010-04-01/Accounts/${accountSid}/Recordings/${sid('RE')}.mp3`;
        } else if (kind === 'missed' || kind === 'busy') {
          status = kind === 'busy' ? 'busy' : 'no_answer';
          row.callOutcome = 'missed';
          row.callDurationSeconds = 0;
        } else {
          status = 'no_answer';
          row.callDurationSeconds = 0;
        }
        row.statusUpdatedAt = new Date(d.at + (row.callDurationSeconds ?? 0) * 1000 + 20_000);
      } else if (inbound) {
        status = 'received';
        row.provider = 'sandbox';
        if (d.kind === 'TEXT') {
          row.providerMessageId = sid('SM');
          row.fromAddress = c.phone;
          row.toAddress = biz.smsNumber;
        } else {
          row.providerMessageId = sid('EM');
          row.fromAddress = c.email;
          row.toAddress = biz.fromEmail;
          row.emailMessageId = `<${f.string.uuid()}@mail.example.com>`;
          row.inReplyTo = lastEmailId;
          lastEmailId = row.emailMessageId;
        }
      } else {
        // Outbound SMS / email.
        const sms = d.kind === 'TEXT';
        row.requestId = f.string.uuid();
        row.attempts = 1;
        row.fromAddress = sms ? biz.smsNumber : biz.fromEmail;
        row.toAddress = sms ? c.phone : c.email;
        // The reminder some opted-out clients got after their STOP is refused, not sent (docs/api.md#opt-out).
        const refused = sms && c.optedOutSms && d === cv.drafts[cv.drafts.length - 1] && s.nt === 'appointment_reminder';
        if (refused) {
          status = 'failed';
          row.provider = null;
          row.errorCode = 'opted_out';
          row.errorMessage = 'The client has opted out of SMS';
        } else if (age < 5 * MIN) {
          status = 'queued';
          row.provider = null;
          row.attempts = 0;
        } else {
          row.provider = 'sandbox';
          row.providerMessageId = sid(sms ? 'SM' : 'EM');
          if (age < HOUR) status = f.datatype.boolean(0.4) ? 'sent' : 'delivered';
          else if (sms) {
            status = f.helpers.weightedArrayElement([
              { weight: 88, value: 'delivered' as const },
              { weight: 6, value: 'sent' as const },
              ...(d.replyTo
                ? []
                : [
                    { weight: 3, value: 'undelivered' as const },
                    { weight: 3, value: 'failed' as const },
                  ]),
            ]);
          } else {
            status = f.helpers.weightedArrayElement([
              { weight: 60, value: 'delivered' as const },
              { weight: 30, value: 'read' as const },
              { weight: 5, value: 'sent' as const },
              ...(d.replyTo ? [] : [{ weight: 3, value: 'bounced' as const }]),
            ]);
          }
          if (status === 'undelivered') {
            row.errorCode = f.helpers.arrayElement(['30003', '30005', '30007']);
            row.errorMessage = twilioErrorMessage(row.errorCode);
          } else if (status === 'failed') {
            row.errorCode = f.helpers.arrayElement(['30006', '30008']);
            row.errorMessage = twilioErrorMessage(row.errorCode);
          } else if (status === 'bounced') {
            const reply = '550 5.1.1 The email account that you tried to reach does not exist';
            [row.errorCode, row.errorMessage] = ['550', emailErrorMessage('550', reply) ?? reply];
          }
          row.statusUpdatedAt = new Date(d.at + f.number.int({ min: 2, max: status === 'read' ? 7200 : 20 }) * 1000);
        }
        if (sms) Object.assign(row, segmentsOf(row.content ?? ''));
        else {
          row.emailMessageId = `<${f.string.uuid()}@${biz.site}>`;
          row.inReplyTo = lastEmailId;
          lastEmailId = row.emailMessageId;
        }
      }
      if (d.kind === 'TEXT' && inbound) Object.assign(row, segmentsOf(row.content ?? ''));
      row.status = status;
      all.push({ at: d.at, row });
    }
  }
  all.sort((a, b) => a.at - b.at);
  await chunked(
    all.map((m) => m.row),
    (chunk) => tx.insert(messages).values(chunk),
  );
  // The texts sent a moment ago are still queued: like any queued message they get their send job,
  // in this transaction (server/services/messages/send-jobs.ts), so the worker sends them through
  // the sandbox and its recovery sweep finds no message in flight without a job.
  const queued = await tx
    .select({ id: messages.id, businessId: messages.businessId, channel: messages.channel, attempts: messages.attempts })
    .from(messages)
    .where(and(equalsAny(messages.businessId, bizIds, 'int'), eq(messages.status, 'queued')))
    .orderBy(messages.id);
  await enqueueSends(
    queued.flatMap((m) => (m.channel === 'sms' || m.channel === 'email' ? [{ ...m, channel: m.channel }] : [])),
    tx,
  );

  // ---- denormalised conversation fields, straight from the messages
  await tx.execute(sql`
    update conversations c set
      last_message_id = l.id,
      last_message_content = l.content,
      last_channel = coalesce(ln.channel, c.last_channel),
      last_activity_at = a.max_sent,
      created_at = least(c.created_at, a.min_sent),
      unread_count = a.unread,
      flagged_count = a.flagged,
      last_read_message_id = a.last_read
    from (
      select conversation_id,
             max(sent_at) as max_sent,
             min(sent_at) as min_sent,
             count(*) filter (where direction = 'inbound' and message_type <> 'NOTE' and not is_read)::int as unread,
             count(*) filter (where flagged)::int as flagged,
             max(id) filter (where direction = 'inbound' and message_type <> 'NOTE' and is_read) as last_read
      from messages
      where business_id in ${bizIds}
      group by conversation_id
    ) a
    join (
      select distinct on (conversation_id) conversation_id, id, content
      from messages
      where business_id in ${bizIds}
      order by conversation_id, sent_at desc, id desc
    ) l on l.conversation_id = a.conversation_id
    left join (
      select distinct on (conversation_id) conversation_id, channel
      from messages
      where business_id in ${bizIds} and message_type <> 'NOTE'
      order by conversation_id, sent_at desc, id desc
    ) ln on ln.conversation_id = a.conversation_id
    where c.id = a.conversation_id
  `);
  // Each client's last contact is their record's last update.
  await tx.execute(sql`
    update clients cl set updated_at = greatest(cl.updated_at, c.last_activity_at)
    from conversations c
    where c.client_id = cl.id and cl.business_id in ${bizIds}
  `);

  // ---- API keys and summary
  const summary: SeedSummary = {
    businesses: [],
    locations: 0,
    staff: staffRows.length,
    clients: clientRows.length,
    messages: all.length,
  };
  for (let bi = 0; bi < BUSINESSES.length; bi++) {
    const businessId = bizIds[bi]!;
    const { key: apiKey, keyHash, prefix } = newBusinessApiKey();
    await tx.insert(apiKeys).values({ businessId, keyHash, prefix });
    const owner = staffPlans.find((s) => s.biz === bi && s.role === 'owner')!;
    summary.businesses.push({ id: businessId, name: BUSINESSES[bi]!.name, ownerStaffId: owner.id, apiKey });
    summary.locations += locIds[bi]!.length;
  }
  return summary;
}
