import { installCommand, SYSTEM_TOOLS, type SystemTool } from '@/deploy/system-tools';

/**
 * The stages of `npm test`, in order, and what each needs beyond Node.js. A stage that needs a
 * missing tool is skipped as a whole; `unit` runs with the files that need one skipping themselves
 * (deploy/system-tools.ts, toolForTestFile).
 */
export type StageDefinition = {
  name: string;
  /** The npm script it runs. */
  script: string;
  /** Its time budget on two cores, in minutes (the README's CI budget). */
  budgetMinutes: number;
  needs: SystemTool[];
  /** Test files of the stage that skip themselves without a tool. */
  filesNeed?: { file: string; tool: SystemTool }[];
};

export const STAGES: StageDefinition[] = [
  { name: 'typecheck', script: 'typecheck', budgetMinutes: 1, needs: [] },
  { name: 'lint', script: 'lint', budgetMinutes: 1, needs: [] },
  {
    name: 'unit and integration',
    script: 'test:unit',
    budgetMinutes: 8,
    needs: [],
    filesNeed: [
      { file: 'deploy/cluster.test.ts', tool: 'haproxy' },
      { file: 'deploy/haproxy.test.ts', tool: 'haproxy' },
      { file: 'server/db/pgbouncer.test.ts', tool: 'pgbouncer' },
    ],
  },
  { name: 'browser', script: 'test:e2e', budgetMinutes: 5, needs: ['chromium'] },
  { name: 'fuzz', script: 'test:fuzz', budgetMinutes: 2, needs: [] },
  { name: 'system', script: 'test:system', budgetMinutes: 4, needs: ['haproxy'] },
];

/** Installing what a fresh clone lacks (`npm ci`; Chromium, HAProxy and PgBouncer when missing), in minutes. */
export const INSTALL_BUDGET_MINUTES = 2;

/**
 * After `npm test`, `.ci/run` runs vitest's `database` project again against the machine's
 * PostgreSQL on :5432: its budget, in minutes.
 */
export const MACHINE_DATABASE_BUDGET_MINUTES = 6;

/** The whole `.ci/run` from a fresh clone on two cores: under this many minutes. */
export const CI_BUDGET_MINUTES = 30;

export type PlannedStage = { name: string; script: string; run: boolean; notes: string[] };

export type Plan =
  | { ok: true; install: SystemTool[]; stages: PlannedStage[] }
  /** CI=true and something is missing that cannot be installed here: CI never skips. */
  | { ok: false; error: string };

const labels = (tools: SystemTool[]) => tools.map((t) => SYSTEM_TOOLS[t].label).join(', ');

/**
 * What `npm test` will do on this machine: install the missing tools when it can (root with
 * apt-get), else skip what needs them, saying what and how to install it; under CI=true nothing may
 * be skipped. Pure: the runner (e2e/run-tests.ts) asks the machine, plans, installs, and plans
 * again with what the install left missing.
 */
export function planStages(machine: { missing: SystemTool[]; canInstall: boolean; ci: boolean }): Plan {
  if (machine.missing.length > 0 && machine.canInstall) {
    return {
      ok: true,
      install: [...machine.missing],
      stages: STAGES.map((s) => ({ name: s.name, script: s.script, run: true, notes: [] })),
    };
  }
  if (machine.missing.length > 0 && machine.ci) {
    return {
      ok: false,
      error: `CI=true and ${labels(machine.missing)} missing, not installable here (needs root and apt-get): CI never skips a test. Install: ${installCommand(machine.missing)}`,
    };
  }
  const missing = new Set(machine.missing);
  const stages = STAGES.map((s): PlannedStage => {
    const lacking = s.needs.filter((t) => missing.has(t));
    if (lacking.length > 0) {
      return {
        name: s.name,
        script: s.script,
        run: false,
        notes: [`needs ${labels(lacking)}: ${installCommand(lacking)} (as root)`],
      };
    }
    const notes = (s.filesNeed ?? [])
      .filter((f) => missing.has(f.tool))
      .map((f) => `${f.file} skips itself: needs ${labels([f.tool])} (${installCommand([f.tool])}, as root)`);
    return { name: s.name, script: s.script, run: true, notes };
  });
  return { ok: true, install: [], stages };
}
