import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * `npx tsx server/bench/cpu-profile.ts <file.cpuprofile> [top]`: the functions with the most self
 * time in a V8 CPU profile (what `node --cpu-prof` writes, see BENCH_CPU_PROF in harness.ts), and
 * the share of the sampled time spent in our code, in node_modules by package, in Node.js itself,
 * in garbage collection and idle.
 */
type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number };
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number };

const file = process.argv[2];
if (!file) throw new Error('usage: tsx server/bench/cpu-profile.ts <file.cpuprofile> [top]');
const top = Number(process.argv[3] ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

// Self time per node: each sample's delta goes to the node it was taken in.
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0);

const where = (url: string) => {
  if (!url) return 'native';
  if (url.startsWith('node:')) return 'node';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  return 'app';
};

const byFunction = new Map<string, number>();
const byArea = new Map<string, number>();
for (const [id, us] of selfUs) {
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  const special = ['(garbage collector)', '(idle)', '(program)'].includes(functionName);
  const key = special
    ? functionName
    : `${functionName || '(anonymous)'} ${url ? `${path.basename(url)}:${lineNumber + 1}` : ''} [${where(url)}]`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + us);
  const area = special ? functionName : where(url);
  byArea.set(area, (byArea.get(area) ?? 0) + us);
}

const pct = (us: number) => `${((100 * us) / totalUs).toFixed(1).padStart(5)}%`;
console.log(`${file}: ${(totalUs / 1e6).toFixed(1)} s sampled`);
console.log('\nself time by area');
for (const [k, us] of [...byArea].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`  ${pct(us)}  ${k}`);
console.log(`\ntop ${top} functions by self time`);
for (const [k, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(us)}  ${k}`);
