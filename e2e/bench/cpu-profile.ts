import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Reads V8 CPU profiles (what `node --cpu-prof` writes, see BENCH_CPU_PROF in harness.ts).
 *
 *   npx tsx e2e/bench/cpu-profile.ts [--last S] <file.cpuprofile> [top]
 *     the share of the sampled time spent in our code, in node_modules by package, in Node.js itself,
 *     in garbage collection and idle, then the functions with the most self time.
 *   npx tsx e2e/bench/cpu-profile.ts [--last S] [--skip T] --diff <before>[@T] <requests> <after>[@T] <requests> [top]
 *     two profiles side by side in microseconds per request (each profile's time divided by the
 *     requests it served in the window), by area and by function, largest change first: what one
 *     request of a workload costs beyond another's (a mix against the bare handler), or before and
 *     after a change. `file@T` gives that side its own `--skip` (two phases of one profile).
 *
 * `--last S` keeps only the samples of the profile's last S seconds (the web server's profile is
 * written when it stops, so its last seconds are the benchmark's last phase), less the final 0.3 s;
 * `--skip T` moves that window T seconds earlier (an earlier phase: with BENCH_SLICES=1, bench:inbox
 * warms the bare handler, the mix and client details 3 s each, then runs each for BENCH_DURATION_S
 * seconds in that order, so the mix is `--last D --skip D` and the bare handler `--skip 2D`).
 */
type Node = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber?: number };
  children?: number[];
};
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number };

const SPECIAL = ['(garbage collector)', '(idle)', '(program)'];

function area(url: string): string {
  if (!url) return 'native';
  if (url.startsWith('node:')) return 'node';
  const nm = url.lastIndexOf('node_modules/');
  if (nm < 0) return 'app';
  const rest = url.slice(nm + 'node_modules/'.length).split('/');
  return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
}

/** Self time (µs) by area and by function over the window. */
function selfTimes(file: string, lastSeconds: number | undefined, skipSeconds = 0) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const to = profile.endTime - (lastSeconds === undefined ? 0 : 0.3e6) - skipSeconds * 1e6;
  const from = lastSeconds === undefined ? -Infinity : to - lastSeconds * 1e6;
  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let at = profile.startTime;
  let total = 0;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    at += us;
    if (at < from || at > to) return;
    total += us;
    const { functionName, url, lineNumber, columnNumber } = byId.get(id)!.callFrame;
    const special = SPECIAL.includes(functionName);
    const key = special
      ? functionName
      : `${functionName || '(anonymous)'} ${url ? `${path.basename(url)}:${lineNumber + 1}:${(columnNumber ?? 0) + 1}` : ''} [${area(url)}]`;
    const a = special ? functionName : area(url);
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    byArea.set(a, (byArea.get(a) ?? 0) + us);
  });
  return { byArea, byFunction, total };
}

const args = process.argv.slice(2);
const lastAt = args.indexOf('--last');
const last = lastAt >= 0 ? Number(args.splice(lastAt, 2)[1]) : undefined;
const skipAt = args.indexOf('--skip');
const skip = skipAt >= 0 ? Number(args.splice(skipAt, 2)[1]) : 0;
const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);

if (args[0] === '--diff') {
  const [, before, beforeRequests, after, afterRequests, topArg] = args;
  if (!before || !after || !Number(beforeRequests) || !Number(afterRequests))
    throw new Error('usage: tsx e2e/bench/cpu-profile.ts [--last S] --diff <before> <requests> <after> <requests> [top]');
  // `file@T`: that side's window T seconds earlier (two phases of one profile, side by side).
  const side = (arg: string) => {
    const [file, at] = arg.split(/@(?=[\d.]+$)/);
    return selfTimes(file!, last, at === undefined ? skip : Number(at));
  };
  const a = side(before);
  const b = side(after);
  const perRequest = (m: Map<string, number>, n: number) => new Map([...m].map(([k, v]) => [k, v / n]));
  const show = (title: string, x: Map<string, number>, y: Map<string, number>, top: number) => {
    console.log(`\n${title}: µs per request, before → after (change)`);
    const keys = [...new Set([...x.keys(), ...y.keys()])];
    const rows = keys
      .map((k) => [k, x.get(k) ?? 0, y.get(k) ?? 0] as const)
      .sort((p, q) => Math.abs(q[2] - q[1]) - Math.abs(p[2] - p[1]));
    for (const [k, v, w] of rows.slice(0, top))
      console.log(
        `  ${v.toFixed(1).padStart(8)} → ${w.toFixed(1).padStart(8)}  (${(w - v >= 0 ? '+' : '') + (w - v).toFixed(1)})  ${k}`,
      );
  };
  const nA = Number(beforeRequests);
  const nB = Number(afterRequests);
  console.log(`whole process: ${(a.total / nA).toFixed(0)} → ${(b.total / nB).toFixed(0)} µs per request`);
  show('by area', perRequest(a.byArea, nA), perRequest(b.byArea, nB), 15);
  show('by function', perRequest(a.byFunction, nA), perRequest(b.byFunction, nB), Number(topArg ?? 30));
} else {
  const [file, topArg] = args;
  if (!file) throw new Error('usage: tsx e2e/bench/cpu-profile.ts [--last S] <file.cpuprofile> [top]');
  const { byArea, byFunction, total } = selfTimes(file, last, skip);
  const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
  console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled`);
  console.log('\nself time by area');
  for (const [k, us] of sorted(byArea).slice(0, 15)) console.log(`  ${pct(us)}  ${k}`);
  console.log(`\ntop ${Number(topArg ?? 25)} functions by self time`);
  for (const [k, us] of sorted(byFunction).slice(0, Number(topArg ?? 25))) console.log(`  ${pct(us)}  ${k}`);
}
