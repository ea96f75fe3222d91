import { z } from 'zod';
import { id } from '@/server/schemas/common';
import { cancelAppointment, clientAppointments, confirmAppointment } from '@/server/services/appointments';
import { actorOfCaller } from '@/server/web/staff-context';
import { staffProcedure } from '../../init';
import { conversationProcedure } from './shared';

/**
 * The client panel's Appointments card (docs/api.md#appointments): the conversation's client's
 * upcoming and recent appointments with their reminders, and staff's confirm and cancel — the same
 * outcomes as a client's reply or the API's DELETE, logged with the staff member as the actor (the
 * event goes out through the outgoing webhooks). Another business's appointment is a 404.
 */
export const appointmentProcedures = {
  appointments: conversationProcedure.query(({ ctx }) =>
    clientAppointments(ctx.caller.businessId, ctx.conversation.clientId, new Date()),
  ),
  /** booked → confirmed (`appointment.confirmed`); a confirmed one again changes nothing (`changed: false`). */
  confirmAppointment: staffProcedure
    .input(z.object({ appointmentId: id }))
    .mutation(({ ctx, input }) =>
      confirmAppointment(ctx.caller.businessId, input.appointmentId, { actor: actorOfCaller(ctx.caller) }),
    ),
  /** → canceled (`appointment.canceled`), its pending reminders canceled; a canceled one again changes nothing. */
  cancelAppointment: staffProcedure
    .input(z.object({ appointmentId: id }))
    .mutation(({ ctx, input }) =>
      cancelAppointment(ctx.caller.businessId, input.appointmentId, { actor: actorOfCaller(ctx.caller) }),
    ),
};
