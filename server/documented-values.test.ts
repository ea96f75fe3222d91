import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BALANCER_DEFAULTS } from '@/deploy/cluster';
import { CI_BUDGET_MINUTES, INSTALL_BUDGET_MINUTES, MACHINE_DATABASE_BUDGET_MINUTES, STAGES } from '@/e2e/test-stages';
import { ConfigError, parseEnv } from '@/server/env';
import { RESUME_MAX_EVENTS } from '@/server/realtime/backlog';

/**
 * The docs quote settings and limits the code defines: this keeps them in step. Every default in
 * the configuration table (docs/configuration.md) that is a plain value must be what the code does
 * when the variable is unset, and a variable the table names must be one the code reads.
 */
const root = path.resolve(import.meta.dirname, '..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

/** The balancer's settings, read by deploy/run.ts rather than server/env.ts. */
const BALANCER_SETTINGS: Record<string, keyof typeof BALANCER_DEFAULTS> = {
  HAPROXY_LOGIN_PER_MINUTE: 'loginPerMinute',
  HAPROXY_WEBHOOK_FAILURES_PER_MINUTE: 'webhookFailuresPerMinute',
  HAPROXY_SERVER_MAXCONN: 'serverMaxconn',
  HAPROXY_STREAM_MAXCONN: 'streamMaxconn',
};

/** `| \`NAME\` | what | \`default\` (a note) |` rows whose default is one plain value. */
function documentedDefaults(): [name: string, value: string][] {
  const rows: [string, string][] = [];
  for (const line of read('docs/configuration.md').split('\n')) {
    const row = /^\| `([A-Z][A-Z0-9_]+)` \|.*\| `([^`]+)`(?: \([^)]*\))? \|$/.exec(line);
    // Not a default that names another variable (`DATABASE_URL`) or is built from one (`$PORT`).
    if (row && !row[2]!.includes('$') && !/^[A-Z][A-Z0-9_]+$/.test(row[2]!)) rows.push([row[1]!, row[2]!]);
  }
  return rows;
}

/** Another value of the same kind, to show the code reads the variable at all. */
const another = (value: string) =>
  /^\d+$/.test(value) ? String(Number(value) + 1) : value === 'true' ? 'false' : value === 'false' ? 'true' : 'warn';

const parsed = (source: Record<string, string>) => {
  try {
    return parseEnv(source);
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
};

describe('the configuration table (docs/configuration.md)', () => {
  const defaults = documentedDefaults();

  it('is read (a guard against a table this test no longer understands)', () => {
    expect(defaults.length).toBeGreaterThan(15);
  });

  it.each(defaults)('%s defaults to %s, and the code reads it', (name, value) => {
    const balancer = BALANCER_SETTINGS[name];
    if (balancer) {
      expect(String(BALANCER_DEFAULTS[balancer])).toBe(value);
      return;
    }
    const unset = parseEnv({});
    expect(parsed({ [name]: value }), `${name}=${value} is not what the code does without it`).toEqual(unset);
    expect(parsed({ [name]: another(value) }), `${name} is not read by server/env.ts`).not.toEqual(unset);
  });
});

describe('limits the docs quote', () => {
  it('a live stream replays at most the events the docs say before it asks for a refetch', () => {
    expect(read('docs/api.md')).toContain(`at most ${RESUME_MAX_EVENTS.toLocaleString('en-US')} events`);
    expect(read('docs/architecture.md')).toContain(`at most ${RESUME_MAX_EVENTS.toLocaleString('en-US')} events`);
  });

  it('the business budget is ten times the per-caller limit by default, as docs/configuration.md and docs/api.md say', () => {
    const { rateLimitPerMinute, rateLimitPerBusinessPerMinute } = parseEnv({});
    expect(rateLimitPerBusinessPerMinute).toBe(10 * rateLimitPerMinute);
    expect(read('docs/configuration.md')).toContain(`| 10 × \`RATE_LIMIT_PER_MINUTE\` (\`${rateLimitPerBusinessPerMinute}\`) |`);
    expect(read('docs/api.md')).toContain(
      `default 10 × \`RATE_LIMIT_PER_MINUTE\` (${rateLimitPerBusinessPerMinute.toLocaleString('en-US')})`,
    );
  });
});

/** What README.md's CI budget calls each stage of `npm test` (e2e/test-stages.ts). */
const README_STAGE_NAMES: Record<string, string> = {
  typecheck: 'typecheck',
  lint: 'lint',
  'unit and integration': 'vitest',
  browser: 'Playwright (build included)',
  fuzz: 'fuzzer',
  system: 'system test',
};

describe('the CI budget (README.md, Tests)', () => {
  const paragraph = /\*\*CI budget\*\*[\s\S]*?(?=\n\n)/.exec(read('README.md'))?.[0].replace(/\s+/g, ' ') ?? '';

  it('states each stage of npm test with the budget the runner announces (e2e/test-stages.ts)', () => {
    expect(STAGES.map((s) => s.name).sort()).toEqual(Object.keys(README_STAGE_NAMES).sort());
    for (const stage of STAGES) {
      expect(paragraph, stage.name).toContain(`${README_STAGE_NAMES[stage.name]} ≤ ${stage.budgetMinutes} min`);
    }
  });

  it('states the install, the database tests on the machine’s PostgreSQL and the whole run, and the parts fit in the whole', () => {
    expect(paragraph).toContain(`install ≤ ${INSTALL_BUDGET_MINUTES} min`);
    expect(paragraph).toContain(`database tests again on the machine's PostgreSQL ≤ ${MACHINE_DATABASE_BUDGET_MINUTES} min`);
    expect(paragraph).toContain(`under ${CI_BUDGET_MINUTES} minutes`);
    expect(read('.ci/run')).toContain(`(about ${MACHINE_DATABASE_BUDGET_MINUTES} min)`);
    const parts = INSTALL_BUDGET_MINUTES + MACHINE_DATABASE_BUDGET_MINUTES + STAGES.reduce((sum, s) => sum + s.budgetMinutes, 0);
    expect(parts).toBeLessThan(CI_BUDGET_MINUTES);
  });
});
