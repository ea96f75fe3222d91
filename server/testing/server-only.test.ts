import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * `import 'server-only'` marks modules a browser bundle must never pull in. Only Next's server
 * bundles (and vitest, vitest.config.ts) resolve it to an empty module: under plain Node it throws.
 * So no module that workers, CLIs, deploy scripts, benchmarks, test helpers or Playwright load with
 * plain Node may carry the mark, directly or through what it imports. That includes every route
 * handler under app/api: server/testing/http.ts imports them by path, and e2e/cli/call-api-cli.ts runs it
 * under plain Node.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const PLAIN_NODE = ['workers', 'server/cli', 'server/testing', 'deploy', 'e2e', 'app/api'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith('.test.ts') ? [full] : [];
  });
}

function resolveImport(from: string, spec: string): string | null {
  const base = spec.startsWith('@/')
    ? path.join(ROOT, spec.slice(2))
    : spec.startsWith('.')
      ? path.resolve(path.dirname(from), spec)
      : null;
  if (!base) return null;
  for (const file of [base, `${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts')]) {
    if (existsSync(file) && statSync(file).isFile()) return file;
  }
  return null;
}

const importsOf = (file: string) =>
  ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.map((f) => f.fileName);

describe('server-only', () => {
  it('no module that plain Node loads imports it', () => {
    const seen = new Set<string>();
    const marked: string[] = [];
    const stack = PLAIN_NODE.flatMap((dir) => sourceFiles(path.join(ROOT, dir)));
    while (stack.length) {
      const file = stack.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      const specs = importsOf(file);
      if (specs.includes('server-only')) marked.push(path.relative(ROOT, file));
      for (const spec of specs) {
        const target = resolveImport(file, spec);
        if (target) stack.push(target);
      }
    }
    expect(seen.size).toBeGreaterThan(100); // the walk did find the workers' and CLIs' imports
    expect(marked).toEqual([]);
  });
});
