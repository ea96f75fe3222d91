import type { z } from 'zod';
import type { Tx } from '@/server/db/client';
import { AppError, type ValidationIssue } from '@/server/errors';
import type { OnboardAppointment } from '@/server/schemas/appointments';
import { upsertAppointment } from './upsert';

/**
 * Onboarding's upcoming appointments (docs/api.md#onboarding): each upserted as PUT
 * …/appointments/{external_id} would (actor `api`), in the onboarding's transaction, after its
 * clients. Every item is tried and one 422 lists every bad one, at its index; nothing is stored
 * unless all are. With clients imported in the background (more than 1,000) the clients they name
 * may not exist yet: refused, to be sent by PUT once the import is done.
 */
export async function onboardAppointments(
  businessId: number,
  list: z.output<typeof OnboardAppointment>[],
  clientsInBackground: boolean,
  tx: Tx,
): Promise<{ external_id: string; appointment_id: number }[]> {
  if (list.length === 0) return [];
  if (clientsInBackground) {
    throw AppError.invalid(
      ['body', 'appointments'],
      'The clients are imported in the background (more than 1,000): send the appointments with PUT …/appointments/{external_id} once they are',
    );
  }
  const issues: ValidationIssue[] = [];
  const stored = new Map<string, number>();
  const now = new Date();
  for (const [index, item] of list.entries()) {
    try {
      const { appointment } = await upsertAppointment(businessId, item.external_id, item, { type: 'api' }, now, tx);
      stored.set(item.external_id, appointment.appointment_id);
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'validation') throw err;
      for (const issue of err.extra.issues ?? []) {
        issues.push({ ...issue, loc: ['body', 'appointments', index, ...issue.loc.slice(1)] });
      }
    }
  }
  if (issues.length) throw new AppError('validation', 'Invalid appointments', { issues });
  return [...stored].map(([external_id, appointment_id]) => ({ external_id, appointment_id }));
}
