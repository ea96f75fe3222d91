import { describe, expect, it } from 'vitest';
import { deliveryState, endpointHealth, eventLabel, readableJson, when } from './webhook-labels';

describe('the webhooks page’s words', () => {
  const on = { enabled: true, disabled_reason: null, disabled_at: null, failing_since: null };
  const at = '2026-11-23T15:04:05Z';

  it('says an address works, fails since when, or is off with why and since when', () => {
    expect(endpointHealth(on)).toEqual({ label: 'Working', tone: 'ok' });
    expect(endpointHealth({ ...on, failing_since: at })).toEqual({
      label: `Failing since ${when(at)}: deliveries are being retried`,
      tone: 'warn',
    });
    expect(endpointHealth({ ...on, enabled: false, disabled_at: at, disabled_reason: 'The endpoint answered 410 Gone' })).toEqual(
      {
        label: `Turned off since ${when(at)}: The endpoint answered 410 Gone`,
        tone: 'bad',
      },
    );
    expect(endpointHealth({ ...on, enabled: false, disabled_at: at }).label).toBe(`Turned off by hand since ${when(at)}`);
  });

  it('tells a delivery on its way from a failure waiting for its retry', () => {
    expect(deliveryState({ status: 'pending', attempts: 0 }).label).toBe('Sending…');
    expect(deliveryState({ status: 'pending', attempts: 2 }).label).toBe('Failed, will retry');
    expect(deliveryState({ status: 'delivered', attempts: 1 }).label).toBe('Delivered');
    expect(deliveryState({ status: 'failed', attempts: 10 }).label).toBe('Failed');
  });

  it('names events in plain words, the test event too, and keeps an unknown type as it is', () => {
    expect(eventLabel('client.opted_out')).toBe('A client opts out');
    expect(eventLabel('webhook.test')).toBe('Test event');
    expect(eventLabel('something.new')).toBe('something.new');
  });

  it('indents a JSON body for reading, and shows anything else as sent', () => {
    expect(readableJson('{"type":"webhook.test","data":{"a":1}}')).toBe(
      '{\n  "type": "webhook.test",\n  "data": {\n    "a": 1\n  }\n}',
    );
    expect(readableJson('not json')).toBe('not json');
  });
});
