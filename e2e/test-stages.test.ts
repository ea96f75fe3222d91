import { afterEach, describe, expect, it, vi } from 'vitest';
import { toolForTestFile } from '@/deploy/system-tools';
import { planStages } from './test-stages';

describe('npm test on a machine without Chromium, HAProxy or PgBouncer', () => {
  const missing = ['chromium', 'haproxy', 'pgbouncer'] as const;

  it('as root with apt-get: installs all three, then runs every stage', () => {
    const plan = planStages({ missing: [...missing], canInstall: true, ci: false });
    expect(plan).toMatchObject({ ok: true, install: ['chromium', 'haproxy', 'pgbouncer'] });
    expect(plan.ok && plan.stages.every((s) => s.run && s.notes.length === 0)).toBe(true);
  });

  it('without root: skips the browser and system stages and the unit files that need a tool, each saying how to install it', () => {
    const plan = planStages({ missing: [...missing], canInstall: false, ci: false });
    if (!plan.ok) throw new Error(plan.error);
    expect(plan.install).toEqual([]);
    const byName = Object.fromEntries(plan.stages.map((s) => [s.name, s]));
    expect(plan.stages.map((s) => [s.name, s.run])).toEqual([
      ['typecheck', true],
      ['lint', true],
      ['unit and integration', true],
      ['browser', false],
      ['fuzz', true],
      ['system', false],
    ]);
    expect(byName.browser!.notes).toEqual(['needs Chromium: apt-get install -y chromium (as root)']);
    expect(byName.system!.notes).toEqual(['needs HAProxy: apt-get install -y haproxy (as root)']);
    expect(byName['unit and integration']!.notes).toEqual([
      'deploy/cluster.test.ts skips itself: needs HAProxy (apt-get install -y haproxy, as root)',
      'deploy/haproxy.test.ts skips itself: needs HAProxy (apt-get install -y haproxy, as root)',
      'server/db/pgbouncer.test.ts skips itself: needs PgBouncer (apt-get install -y pgbouncer, as root)',
    ]);
  });

  it('only PgBouncer missing: every stage runs, one unit file skips itself', () => {
    const plan = planStages({ missing: ['pgbouncer'], canInstall: false, ci: false });
    if (!plan.ok) throw new Error(plan.error);
    expect(plan.stages.every((s) => s.run)).toBe(true);
    expect(plan.stages.flatMap((s) => s.notes)).toEqual([
      'server/db/pgbouncer.test.ts skips itself: needs PgBouncer (apt-get install -y pgbouncer, as root)',
    ]);
  });

  it('under CI=true without a way to install: refuses to run rather than skip', () => {
    const plan = planStages({ missing: ['haproxy'], canInstall: false, ci: true });
    expect(plan).toEqual({ ok: false, error: expect.stringContaining('CI never skips') });
    expect(planStages({ missing: [], canInstall: false, ci: true })).toMatchObject({ ok: true, install: [] });
  });
});

describe('a test file that needs a tool that is not installed', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('is skipped with one line saying what and how to install it; under CI=true it fails instead', () => {
    vi.stubEnv('PATH', '/nonexistent');
    vi.stubEnv('HAPROXY_BIN', '/nonexistent/haproxy');
    vi.stubEnv('CI', 'false');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    expect(toolForTestFile('haproxy', 'deploy/x.test.ts')).toBeUndefined();
    expect(warn).toHaveBeenCalledWith('deploy/x.test.ts skipped: HAProxy is not installed (apt-get install -y haproxy)');
    vi.stubEnv('CI', 'true');
    expect(() => toolForTestFile('haproxy', 'deploy/x.test.ts')).toThrow(/CI never skips/);
  });
});
