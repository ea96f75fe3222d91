import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/**
 * The layer boundaries of docs/architecture.md are ESLint rules (eslint.config.mjs): this checks
 * the rules themselves, by linting small sources as if they stood at the given paths.
 */
const eslint = new ESLint({ cwd: path.resolve(import.meta.dirname, '../..') });

async function restrictedImports(
  filePath: string,
  code: string,
  ruleId = '@typescript-eslint/no-restricted-imports',
): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.filter((m) => m.ruleId === ruleId).map((m) => m.message);
}

describe('layer boundaries', () => {
  it('components/ may not import server code at run time, only types and server/shared', async () => {
    expect(
      await restrictedImports('components/probe.ts', `import { db } from '@/server/db/client';\nexport const x = db;\n`),
    ).toHaveLength(1);
    expect(
      await restrictedImports(
        'components/probe.ts',
        `import { enqueue } from '@/server/jobs/enqueue';\nexport const x = enqueue;\n`,
      ),
    ).toHaveLength(1);
    const allowed = `import type { AppRouter } from '@/server/trpc/root';
import { MAX_SMS_LENGTH } from '@/server/shared/limits';
export const x: [AppRouter | null, number] = [null, MAX_SMS_LENGTH];
`;
    expect(await restrictedImports('components/probe.ts', allowed)).toEqual([]);
  });

  it('server/shared stays pure: no server code, no Node.js modules', async () => {
    expect(
      await restrictedImports('server/shared/probe.ts', `import { env } from '@/server/env';\nexport const x = env;\n`),
    ).toHaveLength(1);
    expect(await restrictedImports('server/shared/probe.ts', `import fs from 'node:fs';\nexport const x = fs;\n`)).toHaveLength(
      1,
    );
  });

  it('services are transport-free: no next, server/http, server/web or server/trpc', async () => {
    for (const from of ['next/server', '@/server/http/route', '@/server/web/credentials', '@/server/trpc/init']) {
      expect(
        await restrictedImports('server/services/probe.ts', `import * as m from '${from}';\nexport const x = m;\n`),
      ).toHaveLength(1);
    }
    expect(
      await restrictedImports('server/services/probe.ts', `import { db } from '@/server/db/client';\nexport const x = db;\n`),
    ).toEqual([]);
  });

  it('services never import the worker process (it registers them); their tests may start one', async () => {
    const code = `import { startWorker } from '@/workers/index';\nexport const x = startWorker;\n`;
    expect(await restrictedImports('server/services/probe.ts', code)).toHaveLength(1);
    expect(await restrictedImports('server/services/probe.test.ts', code)).toEqual([]);
    // The transport rule still holds for tests.
    expect(
      await restrictedImports('server/services/probe.test.ts', `import * as m from 'next/server';\nexport const x = m;\n`),
    ).toHaveLength(1);
  });

  it('the product and its test support never import the whole-system tools in e2e/', async () => {
    const code = `import { startWebServer } from '@/e2e/bench/harness';\nimport { seed } from '../../e2e/system/seed';\nexport const x = [startWebServer, seed];\n`;
    for (const at of ['server/services/probe.ts', 'server/testing/probe.ts', 'workers/probe.ts', 'db/probe.ts', 'app/probe.ts']) {
      expect(await restrictedImports(at, code, 'no-restricted-imports'), at).toHaveLength(2);
    }
    // Unit tests may (they spawn e2e/cli/ by path), and the tools import the product freely.
    expect(await restrictedImports('server/http/probe.test.ts', code, 'no-restricted-imports')).toEqual([]);
    expect(
      await restrictedImports('e2e/bench/probe.ts', `import { db } from '@/server/db/client';\nexport const x = db;\n`),
    ).toEqual([]);
  });
});
