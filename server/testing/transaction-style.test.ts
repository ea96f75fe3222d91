import { execSync } from 'node:child_process';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import {
  compilerOptions,
  isRouteHandlerFile,
  isServiceFile,
  transactionStyleViolations,
  type Violation,
} from './transaction-style';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The program of the given files, with `probes` (path → source) read from memory instead of disk. */
function programOf(files: string[], probes: Record<string, string> = {}): ts.Program {
  const options = compilerOptions();
  const host = ts.createCompilerHost(options);
  const virtual = new Map(Object.entries(probes).map(([rel, text]) => [path.join(ROOT, rel), text]));
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, version, ...rest) =>
    virtual.has(name) ? ts.createSourceFile(name, virtual.get(name)!, version) : getSourceFile.call(host, name, version, ...rest);
  host.fileExists = (name) => virtual.has(name) || fileExists.call(host, name);
  host.readFile = (name) => virtual.get(name) ?? readFile.call(host, name);
  return ts.createProgram([...files, ...virtual.keys()], options, host);
}

function probe(probes: Record<string, string>): Omit<Violation, 'text'>[] {
  const files = Object.keys(probes).map((rel) => path.join(ROOT, rel));
  return transactionStyleViolations(programOf([], probes), files).map(({ file, line, rule }) => ({ file, line, rule }));
}

const header = `import { sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
`;

describe('one transaction style (docs/contributing.md#conventions)', () => {
  it('every service and route handler keeps it', () => {
    const files = execSync('git ls-files "*.ts"', { cwd: ROOT })
      .toString()
      .split('\n')
      .filter(Boolean)
      .map((f) => path.join(ROOT, f))
      .filter((f) => isServiceFile(f) || isRouteHandlerFile(f));
    expect(files.filter(isServiceFile).length).toBeGreaterThan(40);
    expect(files.filter(isRouteHandlerFile).length).toBeGreaterThan(40);
    expect(transactionStyleViolations(programOf(files), files)).toEqual([]);
  }, 120_000);

  it('finds a service that reaches for db itself (rule 1)', () => {
    const source = `${header}
export async function count(businessId: number) {
  return db.execute(sql\`select \${businessId}\`);
}
export async function countOn(businessId: number, tx: Tx = db) {
  return tx.execute(sql\`select \${businessId}\`);
}
`;
    expect(probe({ 'server/services/probe.ts': source })).toEqual([{ file: 'server/services/probe.ts', line: 5, rule: 1 }]);
  }, 60_000);

  it('finds a Tx parameter that is not the last one, or not named tx (rule 2)', () => {
    const source = `${header}
export async function first(tx: Tx, businessId: number) {
  return tx.execute(sql\`select \${businessId}\`);
}
export async function named(businessId: number, conn: Tx = db) {
  return conn.execute(sql\`select \${businessId}\`);
}
`;
    expect(probe({ 'server/services/probe.ts': source }).map((v) => [v.line, v.rule])).toEqual([
      [4, 2],
      [7, 2],
      [7, 1], // its default is db, which only tx may have
    ]);
  }, 60_000);

  it('finds a call that leaves the caller’s transaction behind, in a service or a route handler (rule 3)', () => {
    const service = `${header}
export async function inner(businessId: number, tx: Tx = db) {
  return tx.execute(sql\`select \${businessId}\`);
}
export async function outer(businessId: number, tx: Tx = db) {
  await inner(businessId, tx);
  return inner(businessId);
}
// No tx of its own: it runs on the pool by design, and may leave that to inner's default.
export async function onPool(businessId: number) {
  return inner(businessId);
}
`;
    const handler = `import { inner } from '@/server/services/probe';
export const GET = async ({ id, tx }: { id: number; tx: import('@/server/db/client').Tx }) => {
  await inner(id, tx);
  return inner(id);
};
`;
    expect(probe({ 'server/services/probe.ts': service, 'app/api/v1/probe/route.ts': handler })).toEqual([
      { file: 'server/services/probe.ts', line: 9, rule: 3 },
      { file: 'app/api/v1/probe/route.ts', line: 4, rule: 3 },
    ]);
  }, 60_000);
});
