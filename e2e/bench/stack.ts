import type { ChildProcess } from 'node:child_process';
import os from 'node:os';
import { getExpectedTwilioSignature } from 'twilio/lib/webhooks/webhooks';
import { createSql } from '@/db/connect';
import { startFakeTwilio, type FakeTwilio } from '@/server/testing/fake-twilio';
import { benchDatabase, sleep, startWebServer, startWorkerProcess, stopChild } from './harness';

/**
 * The whole product as the end-to-end benchmarks run it (bench:assign, bench:webhooks-out,
 * bench:appointments): a database, a fake Twilio (5 ms a call) that the worker's real twilio client
 * sends to, the production web server and ONE worker, with the credentials this process signs
 * with. What it starts is stopped by `runBench` at the end, on a failure or on Ctrl-C.
 */

export const ACCOUNT_SID = `AC${'0'.repeat(32)}`;
export const AUTH_TOKEN = 'bench-auth-token';
export const PLATFORM_KEY = 'bench-platform-key-0123456789';
const INBOUND_SMS_PATH = '/api/v1/webhooks/twilio/sms/incoming';

/** What was started, stopped in reverse order at the end or on a failure (no server or database left behind). */
const stopAll: (() => Promise<unknown>)[] = [];
export const onStop = (stop: () => Promise<unknown>) => void stopAll.push(stop);
let stopping: Promise<void> | null = null;
/** Once: a signal and the failure it causes (the database gone under a query) both wait for the same stop. */
const stopEverything = () =>
  (stopping ??= (async () => {
    for (const stop of stopAll.splice(0).reverse()) await stop().catch((err) => console.error(err));
  })());

/** Runs a benchmark's main: whatever it started is stopped, then the process exits with its code (1 on a throw, 130 on a signal). */
export function runBench(main: () => Promise<number>): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => void stopEverything().then(() => process.exit(130)));
  main().then(
    async (code) => {
      await stopEverything();
      process.exit(code);
    },
    async (err) => {
      console.error(err);
      await stopEverything();
      process.exit(1);
    },
  );
}

/** "on 2 cores (model), load average 0.4 1.0 0.9": a benchmark's first line says what it ran on. */
export const machine = () => `${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown cpu'}), load average ${loadAverage()}`;
export const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

export type Stack = {
  databaseUrl: string;
  /** The web server's and the worker's environment (less PUBLIC_BASE_URL): what a service run in the bench's process needs. */
  env: NodeJS.ProcessEnv;
  sql: ReturnType<typeof createSql>;
  fake: FakeTwilio;
  web: { url: string; child: ChildProcess };
  worker: ChildProcess;
  /** A REST call with the platform key; its JSON answer, or a throw naming the status. */
  api: (method: string, path: string, body?: unknown) => Promise<Record<string, unknown>>;
  /** A client's text, posted to the inbound webhook signed as Twilio signs it; the answer's status. */
  inboundSms: (sms: { sid: string; from: string; to: string; body: string }) => Promise<number>;
};

/** The web server's and the worker's environment: this database, the fake Twilio, the credentials above; `extra` adds or overrides. */
export const productEnv = (
  databaseUrl: string,
  fakeTwilioUrl: string,
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv => ({
  ...process.env,
  DATABASE_URL: databaseUrl,
  PLATFORM_API_KEY: PLATFORM_KEY,
  SESSION_SECRET: 'bench-session-secret-0123456789',
  SMS_PROVIDER: 'twilio',
  TWILIO_ACCOUNT_SID: ACCOUNT_SID,
  TWILIO_AUTH_TOKEN: AUTH_TOKEN,
  TWILIO_API_BASE_URL: fakeTwilioUrl,
  RATE_LIMIT_PER_MINUTE: '1000000',
  ...extra,
});

/**
 * Starts the stack; `env` adds to the web server's and the worker's environment, `settings` to an
 * embedded PostgreSQL's.
 */
export async function startStack(env: Record<string, string> = {}, settings: Record<string, string> = {}): Promise<Stack> {
  const database = await benchDatabase(settings);
  onStop(() => database.stop());
  const sql = createSql(database.url, { max: 4 });
  onStop(() => sql.end());
  const fake = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, latencyMs: 5 });
  onStop(() => fake.close());
  const serverEnv = productEnv(database.url, fake.url, env);
  // PUBLIC_BASE_URL: the URL Twilio's requests are signed for, and the worker's StatusCallback.
  const web = await startWebServer(serverEnv, (url) => ({ PUBLIC_BASE_URL: url }));
  onStop(() => web.stop());
  const worker = startWorkerProcess({ ...serverEnv, PUBLIC_BASE_URL: web.url });
  onStop(() => stopChild(worker));
  await sleep(1500);
  const api: Stack['api'] = async (method, path, body) => {
    const res = await fetch(`${web.url}/api/v1${path}`, {
      method,
      headers: { 'content-type': 'application/json', 'x-api-key': PLATFORM_KEY },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
  const inboundSms: Stack['inboundSms'] = async (sms) => {
    const params = {
      MessageSid: sms.sid,
      SmsSid: sms.sid,
      AccountSid: ACCOUNT_SID,
      From: sms.from,
      To: sms.to,
      Body: sms.body,
      NumMedia: '0',
    };
    const res = await fetch(`${web.url}${INBOUND_SMS_PATH}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': getExpectedTwilioSignature(AUTH_TOKEN, `${web.url}${INBOUND_SMS_PATH}`, params),
      },
      body: new URLSearchParams(params).toString(),
    });
    await res.text();
    return res.status;
  };
  return { databaseUrl: database.url, env: serverEnv, sql, fake, web, worker, api, inboundSms };
}

/** A MessageSid unique per run and number: zero-padded before the number (1 and 10 padded after it would be one SID, a duplicate to Twilio's retry rule). */
export const inboundSid = (prefix: string, seq: number) => `SM${prefix}x${String(seq).padStart(24, '0')}`;
