import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@/db/embedded';
import { waitForOk } from '@/server/cli/child-process';
import { balancerLimits, haproxyConfig } from './cluster';
import { toolForTestFile } from '@/deploy/system-tools';

/**
 * deploy/haproxy.cfg.template's per-process caps, with stand-ins for the web processes (no build,
 * no database): each holds every request it gets until told to answer, and counts how many it
 * holds at once. deploy/cluster.test.ts runs the same template in front of the real product.
 */
const limits = balancerLimits({ serverMaxconn: 2, streamMaxconn: 3 });

type Web = {
  name: string;
  port: number;
  server: http.Server;
  held: http.ServerResponse[];
  most: number;
  /** When the balancer's health checks reached it: a wait that times out says whether it was in rotation. */
  checks: number[];
};
let webs: Web[];
let balancer: ChildProcess;
let url: string;
let dir: string;

async function standIn(name: string): Promise<Web> {
  const port = await freePort();
  const web: Web = { name, port, server: http.createServer(), held: [], most: 0, checks: [] };
  web.server.on('request', (req, res) => {
    if (req.url === '/api/v1/health/live') {
      web.checks = [...web.checks.slice(-50), Date.now()];
      return void res.end('ok');
    }
    web.held.push(res);
    web.most = Math.max(web.most, web.held.length);
    res.on('close', () => web.held.splice(web.held.indexOf(res), 1));
    if (req.url?.startsWith('/api/trpc/inbox.events'))
      res.writeHead(200, { 'content-type': 'text/event-stream' }).write(': open\n\n');
  });
  await new Promise<void>((resolve) => web.server.listen(port, '127.0.0.1', resolve));
  return web;
}

/** HAProxy, or undefined: the file is skipped, saying so (never under CI=true). */
const haproxy = toolForTestFile('haproxy', 'deploy/haproxy.test.ts');

beforeAll(async () => {
  if (!haproxy) return;
  webs = [await standIn('web1'), await standIn('web2')];
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  dir = mkdtempSync(path.join(os.tmpdir(), 'haproxy-test-'));
  const file = path.join(dir, 'haproxy.cfg');
  writeFileSync(
    file,
    haproxyConfig({
      bind: `127.0.0.1:${port}`,
      forwardedProto: 'http',
      servers: webs.map((w) => ({ name: w.name, address: `127.0.0.1:${w.port}` })),
      limits,
    }),
  );
  balancer = spawn(haproxy, ['-f', file, '-db'], { stdio: 'ignore' });
  await waitForOk(`${url}/api/v1/health/live`, { alive: () => balancer.exitCode === null, what: 'haproxy', timeoutMs: 15_000 });
  // Both stand-ins in rotation (two health checks each, 500 ms apart).
  await new Promise((r) => setTimeout(r, 1500));
}, 30_000);

afterAll(async () => {
  balancer?.kill('SIGKILL');
  for (const w of webs ?? []) {
    for (const res of [...w.held]) res.destroy();
    w.server.closeAllConnections();
    await new Promise((r) => w.server.close(r));
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A request through the balancer; resolves with its status once answered (or headers, for a stream). */
function send(pathname: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${url}${pathname}`, { agent: false }, (res) => {
      resolve(res.statusCode!);
      res.resume();
    });
    req.on('error', reject);
  });
}

const held = () => webs.reduce((n, w) => n + w.held.length, 0);
/**
 * Waits for `condition`. 12 s: a stand-in the balancer's health checks missed twice (a starved
 * test process) is out of rotation for about 2 s, and what is queued for it waits up to `timeout
 * queue` (10 s); the timeout's message says what each stand-in held and when it was last checked.
 */
async function until(condition: () => boolean, what: string) {
  const deadline = Date.now() + 12_000;
  while (!condition()) {
    if (Date.now() > deadline) {
      const state = webs.map(
        (w) => `${w.name} holds ${w.held.length}, last health check ${Date.now() - (w.checks.at(-1) ?? 0)} ms ago`,
      );
      throw new Error(`timed out waiting for ${what} (${state.join('; ')})`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}
const release = () => {
  for (const w of webs) for (const res of [...w.held]) res.end('done');
};

describe.skipIf(!haproxy)('per-process caps (maxconn)', () => {
  it('gives each web process at most SERVER_MAXCONN requests at once; the rest wait at the balancer and are served in turn', async () => {
    const answers = Array.from({ length: 7 }, (_, i) => send(`/api/v1/slow/${i}`));
    await until(() => held() === 2 * limits.serverMaxconn, 'both processes full');
    await new Promise((r) => setTimeout(r, 300));
    // Five more were sent; only what the caps allow reached the processes.
    expect(webs.map((w) => w.held.length)).toEqual([limits.serverMaxconn, limits.serverMaxconn]);
    while (held() > 0) {
      release();
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await Promise.all(answers)).toEqual(Array(7).fill(200));
    for (const w of webs) expect(w.most).toBe(limits.serverMaxconn);
  });

  it('event streams have slots of their own: open streams never take a request slot, and each process holds at most STREAM_MAXCONN', async () => {
    for (const w of webs) w.most = 0;
    // More streams than both processes may hold: the extra one waits in the queue.
    const streams = Array.from({ length: 2 * limits.streamMaxconn + 1 }, () => send('/api/trpc/inbox.events?input=x'));
    await until(() => held() === 2 * limits.streamMaxconn, 'the streams open');
    await new Promise((r) => setTimeout(r, 300));
    expect(held()).toBe(2 * limits.streamMaxconn);
    // With every stream slot taken, requests still get their own.
    const requests = Array.from({ length: 2 * limits.serverMaxconn }, (_, i) => send(`/api/v1/fast/${i}`));
    await until(() => held() === 2 * limits.streamMaxconn + 2 * limits.serverMaxconn, 'the requests reach the processes');
    for (const w of webs) expect(w.most).toBeLessThanOrEqual(limits.streamMaxconn + limits.serverMaxconn);
    while (held() > 0) {
      release();
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await Promise.all([...streams, ...requests])).toEqual(Array(streams.length + requests.length).fill(200));
  });

  it('refuses limits that are not whole numbers in range (they are written into the configuration)', () => {
    expect(() => balancerLimits({ loginPerMinute: 0 })).toThrow(/loginPerMinute/);
    expect(() => balancerLimits({ serverMaxconn: 1.5 })).toThrow(/serverMaxconn/);
    expect(() => balancerLimits({ streamMaxconn: Number.NaN })).toThrow(/streamMaxconn/);
    expect(balancerLimits({ webhookFailuresPerMinute: 5 }).webhookFailuresPerMinute).toBe(5);
  });
});
