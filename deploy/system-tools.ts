import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The programs some tests need beyond Node.js, each a Debian package: Chromium (the browser
 * tests), HAProxy (the balancer in deploy/*.test.ts and the system test), PgBouncer
 * (server/db/pgbouncer.test.ts). `npm test` installs the missing ones where it can (root with apt-get,
 * e2e/run-tests.ts); where it cannot, what needs them is skipped, saying so — never under CI=true.
 */
export type SystemTool = 'chromium' | 'haproxy' | 'pgbouncer';

export const SYSTEM_TOOLS: Record<SystemTool, { label: string; debianPackage: string }> = {
  chromium: { label: 'Chromium', debianPackage: 'chromium' },
  haproxy: { label: 'HAProxy', debianPackage: 'haproxy' },
  pgbouncer: { label: 'PgBouncer', debianPackage: 'pgbouncer' },
};

/** The first executable file named `name` among `dirs` and the PATH. */
function executable(name: string, dirs: string[]): string | undefined {
  for (const dir of [...dirs, ...(process.env.PATH ?? '').split(path.delimiter)]) {
    if (!dir) continue;
    const file = path.join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Where each tool is, or undefined when it is not installed. */
export function systemToolPath(tool: SystemTool): string | undefined {
  switch (tool) {
    case 'chromium':
      // playwright.config.ts: CHROMIUM_PATH, else Debian's, else Playwright's own browser (a
      // machine that can download it), found by Playwright itself.
      if (process.env.CHROMIUM_PATH) return existsSync(process.env.CHROMIUM_PATH) ? process.env.CHROMIUM_PATH : undefined;
      return executable('chromium', ['/usr/bin']) ?? playwrightChromium();
    case 'haproxy':
      if (process.env.HAPROXY_BIN) return existsSync(process.env.HAPROXY_BIN) ? process.env.HAPROXY_BIN : undefined;
      return executable('haproxy', ['/usr/sbin', '/usr/local/sbin', '/usr/bin', '/usr/local/bin']);
    case 'pgbouncer':
      return executable('pgbouncer', ['/usr/sbin', '/usr/local/sbin', '/usr/bin']);
  }
}

/** Playwright's downloaded Chromium, when there is one (asked in a child: its module is large). */
function playwrightChromium(): string | undefined {
  const found = spawnSync(
    process.execPath,
    [
      '-e',
      "const p = require('@playwright/test').chromium.executablePath(); process.stdout.write(require('fs').existsSync(p) ? p : '')",
    ],
    { encoding: 'utf8' },
  );
  return found.status === 0 && found.stdout ? found.stdout : undefined;
}

/** How to get `tools` on Debian. */
export const installCommand = (tools: SystemTool[]) =>
  `apt-get install -y ${tools.map((t) => SYSTEM_TOOLS[t].debianPackage).join(' ')}`;

/**
 * For a test file that needs `tool`: its path, or undefined after one line saying the file is
 * skipped and how to install it. Under CI=true a missing tool is an error: CI never skips.
 */
export function toolForTestFile(tool: SystemTool, file: string): string | undefined {
  const found = systemToolPath(tool);
  if (found) return found;
  const how = `${SYSTEM_TOOLS[tool].label} is not installed (${installCommand([tool])})`;
  if (process.env.CI === 'true') throw new Error(`${file}: ${how}, and CI never skips a test`);
  console.warn(`${file} skipped: ${how}`);
  return undefined;
}
