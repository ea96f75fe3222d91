import { flushRateLimits } from '@/server/http/rate-limit';
import { api } from './http';

/**
 * `tsx server/testing/call-api-cli.ts GET /api/v1/... N`: calls a route N times in this process,
 * with X-API-KEY from CALL_API_KEY, and prints the statuses as JSON. Lets tests prove that state
 * (rate limits, idempotency) is shared between processes through the database.
 */
const [method = 'GET', path = '/', times = '1'] = process.argv.slice(2);
const statuses: number[] = [];
for (let i = 0; i < Number(times); i++) {
  const res = await api[method.toLowerCase() as 'get'](path, { headers: { 'x-api-key': process.env.CALL_API_KEY ?? '' } });
  statuses.push(res.status);
}
// Rate-limit hits are counted in memory and flushed about once a second: write them before exiting.
await flushRateLimits();
console.log(JSON.stringify(statuses));
process.exit(0);
