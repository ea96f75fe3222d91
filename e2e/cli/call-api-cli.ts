import { flushRateLimits } from '@/server/web/rate-limit';
import { api } from '@/server/testing/http';

/**
 * `tsx e2e/cli/call-api-cli.ts GET /api/v1/... N`: calls a route N times in this process,
 * with X-API-KEY from CALL_API_KEY (plus the JSON headers in CALL_API_HEADERS, and the JSON body in
 * CALL_API_BODY), and prints the statuses as JSON. Lets tests prove that state (rate limits,
 * idempotency) is shared between processes through the database, and kill a process mid-request.
 */
const [method = 'GET', path = '/', times = '1'] = process.argv.slice(2);
const headers = { 'x-api-key': process.env.CALL_API_KEY ?? '', ...JSON.parse(process.env.CALL_API_HEADERS ?? '{}') };
const body = process.env.CALL_API_BODY ? JSON.parse(process.env.CALL_API_BODY) : undefined;
const statuses: number[] = [];
for (let i = 0; i < Number(times); i++) {
  const res = await api[method.toLowerCase() as 'post'](path, { headers, body });
  statuses.push(res.status);
}
// Rate-limit hits are counted in memory and flushed about once a second: write them before exiting.
await flushRateLimits();
console.log(JSON.stringify(statuses));
process.exit(0);
