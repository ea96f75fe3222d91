import { spawnSync } from 'node:child_process';
import { installCommand, SYSTEM_TOOLS, systemToolPath, type SystemTool } from '@/deploy/system-tools';
import { planStages, STAGES } from './test-stages';

/**
 * `npm test`: every stage in order (e2e/test-stages.ts), after installing the Debian packages the
 * stages need when they are missing and this machine allows it (root with apt-get); else what needs
 * them is skipped, saying so. Stops at the first failing stage and ends with a summary of stages.
 * `.ci/run` calls it too, with CI=true: nothing may be skipped there.
 */
const tools = Object.keys(SYSTEM_TOOLS) as SystemTool[];
const missingTools = () => tools.filter((t) => !systemToolPath(t));
const canInstall = () =>
  process.getuid?.() === 0 && spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0;
const ci = process.env.CI === 'true';
const say = (line: string) => console.log(`::: ${line}`);

let plan = planStages({ missing: missingTools(), canInstall: canInstall(), ci });
if (plan.ok && plan.install.length > 0) {
  say(`installing ${plan.install.map((t) => SYSTEM_TOOLS[t].label).join(', ')} (${installCommand(plan.install)})`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  spawnSync('sh', ['-c', `${installCommand(plan.install)} -qq >/dev/null`], { stdio: 'inherit', env });
  // Whatever the install left missing is skipped (or, under CI, fails the run).
  plan = planStages({ missing: missingTools(), canInstall: false, ci });
}
if (!plan.ok) {
  console.error(`::: ${plan.error}`);
  process.exit(1);
}

const results: { name: string; outcome: 'passed' | 'skipped' | 'failed' | 'not run'; seconds?: number; notes: string[] }[] = [];
let failed = false;
for (const stage of plan.stages) {
  if (failed) {
    results.push({ name: stage.name, outcome: 'not run', notes: [] });
    continue;
  }
  if (!stage.run) {
    say(`${stage.name} skipped: ${stage.notes.join('; ')}`);
    results.push({ name: stage.name, outcome: 'skipped', notes: stage.notes });
    continue;
  }
  for (const note of stage.notes) say(note);
  const budget = STAGES.find((s) => s.name === stage.name)!.budgetMinutes;
  say(`${stage.name} (npm run ${stage.script}, about ${budget} min)`);
  const started = Date.now();
  const run = spawnSync('npm', ['run', '--silent', stage.script], { stdio: 'inherit' });
  const seconds = Math.round((Date.now() - started) / 1000);
  failed = run.status !== 0;
  results.push({ name: stage.name, outcome: failed ? 'failed' : 'passed', seconds, notes: stage.notes });
}

console.log('\nstages');
for (const r of results) {
  const time = r.seconds === undefined ? '' : ` (${r.seconds} s)`;
  console.log(`  ${r.outcome.padEnd(8)} ${r.name}${time}${r.notes.length ? ` — ${r.notes.join('; ')}` : ''}`);
}
process.exit(failed ? 1 : 0);
