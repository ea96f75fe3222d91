import { describe, expect, it } from 'vitest';
import { openApiDocument } from '@/server/http/openapi';

/** docs/api.md#appointments: what the OpenAPI document states of appointments, for integrators and the fuzzer. */

describe('appointments in the OpenAPI document', () => {
  it('documents the events’ data and the operations’ bounds', () => {
    const doc = openApiDocument() as {
      webhooks: Record<string, unknown>;
      paths: Record<
        string,
        Record<string, { parameters?: { name: string; schema: Record<string, unknown> }[]; responses: Record<string, unknown> }>
      >;
    };
    for (const type of ['appointment.created', 'appointment.updated', 'appointment.confirmed', 'appointment.canceled']) {
      expect(JSON.stringify(doc.webhooks)).toContain(type);
    }
    const put = doc.paths['/businesses/{business_id}/appointments/{external_id}']!.put!;
    expect(Object.keys(put.responses)).toEqual(expect.arrayContaining(['200', '201', '422', '404']));
    expect(put.parameters!.find((p) => p.name === 'external_id')!.schema).toMatchObject({
      type: 'string',
      minLength: 1,
      maxLength: 255,
    });
  });

  it('bounds every field of an appointment and a reminder rule', () => {
    const doc = openApiDocument() as {
      components: { schemas: Record<string, { properties: Record<string, Record<string, unknown>> }> };
    };
    const put = doc.components.schemas.PutAppointmentRequest!.properties;
    expect(put.client_external_id).toMatchObject({ maxLength: 255 });
    expect(put.service).toMatchObject({ maxLength: 200 });
    expect(put.notes).toMatchObject({ maxLength: 2000 });
    expect(put.starts_at).toMatchObject({ format: 'date-time', maxLength: 40 });
    expect(put.client_id).toMatchObject({ minimum: 1, maximum: 2147483647 });
    // An appointment's answer lists at most 20 reminders, and says when it left some out.
    const answer = doc.components.schemas.Appointment!.properties;
    expect(answer.reminders).toMatchObject({ type: 'array', maxItems: 20 });
    expect(answer.reminders_truncated).toMatchObject({ type: 'boolean' });
    expect(doc.components.schemas.BusinessOnboardRequest!.properties.appointments).toMatchObject({ maxItems: 100 });
    const rule = doc.components.schemas.ReminderRuleInput!.properties;
    expect(rule.before).toMatchObject({ maxLength: 20 });
    expect(rule.text).toMatchObject({ maxLength: 1600 });
    // docs/api.md#review-requests: the settings' bounds.
    const review = doc.components.schemas.ReviewRequestSettingsRequest!.properties;
    expect(JSON.stringify(review.review_link)).toMatch(/"maxLength":500/);
    expect(JSON.stringify(review.review_link)).toMatch(/"null"/);
    expect(review.delay_minutes).toMatchObject({ minimum: 15, maximum: 10080 });
    expect(review.cooldown_days).toMatchObject({ minimum: 1, maximum: 730 });
    expect(review.text).toMatchObject({ maxLength: 1600 });
    expect(review.channel).toMatchObject({ enum: ['sms', 'email'] });
  });
});
