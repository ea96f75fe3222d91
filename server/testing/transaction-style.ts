import path from 'node:path';
import ts from 'typescript';

/**
 * The one transaction style of docs/contributing.md#conventions, checked over the TypeScript program:
 *
 * 1. A service reaches the database only through a `tx: Tx` parameter: `db` (from `@/server/db/client`)
 *    appears in a service only as that parameter's default (`tx: Tx = db`).
 * 2. A parameter of type `Tx` is named `tx` and is the function's last parameter.
 * 3. Where a `tx` is in scope, a call to a function that takes `tx` passes it, so a caller's
 *    transaction reaches every statement below it (a call that leaves it out would silently run on
 *    the pool). A function with no `tx` runs on the pool by design and says so by taking none.
 *
 * Rules 1 and 2 hold in `server/services/`; rule 3 also in the route handlers of `app/api/`, whose
 * context carries the request's transaction (`ctx.tx`: the Idempotency-Key's, or the pool).
 */
export type Violation = { file: string; line: number; rule: 1 | 2 | 3; text: string };

const ROOT = path.resolve(import.meta.dirname, '../..');

export function compilerOptions(): ts.CompilerOptions {
  const configPath = path.join(ROOT, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  return { ...parsed.options, noEmit: true, incremental: false };
}

export function isServiceFile(file: string): boolean {
  const rel = path.relative(ROOT, file).split(path.sep).join('/');
  return rel.startsWith('server/services/') && !rel.endsWith('.test.ts');
}

export function isRouteHandlerFile(file: string): boolean {
  const rel = path.relative(ROOT, file).split(path.sep).join('/');
  return rel.startsWith('app/api/') && rel.endsWith('/route.ts');
}

function isTxParameter(p: ts.ParameterDeclaration): boolean {
  return p.type !== undefined && ts.isTypeReferenceNode(p.type) && p.type.typeName.getText() === 'Tx';
}

/** The symbol `db` as imported from '@/server/db/client' in this file, if it is. */
function importedDb(source: ts.SourceFile, checker: ts.TypeChecker): ts.Symbol | undefined {
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement)) continue;
    if ((statement.moduleSpecifier as ts.StringLiteral).text !== '@/server/db/client') continue;
    const bindings = statement.importClause?.namedBindings;
    if (!bindings || !ts.isNamedImports(bindings)) continue;
    for (const element of bindings.elements) {
      if ((element.propertyName ?? element.name).text === 'db') return checker.getSymbolAtLocation(element.name);
    }
  }
  return undefined;
}

/** The parameter a call leaves out when its callee's last parameter is `tx: Tx`, if it does. */
function omitsTx(call: ts.CallExpression, checker: ts.TypeChecker): string | undefined {
  const signature = checker.getResolvedSignature(call);
  const declaration = signature?.getDeclaration();
  if (!declaration || !('parameters' in declaration)) return undefined;
  const parameters = declaration.parameters as ts.NodeArray<ts.ParameterDeclaration>;
  const last = parameters[parameters.length - 1];
  if (!last || !isTxParameter(last)) return undefined;
  if (call.arguments.length >= parameters.length) return undefined;
  return call.expression.getText();
}

/**
 * Whether a function around `node` has a `tx` (a parameter, or a destructured handler context): a
 * call there must pass it on. A function without one runs on the pool by design (a worker's batch,
 * the status callbacks' group commit, a tRPC procedure) and may leave it to the callee's default.
 */
function hasTxInScope(node: ts.Node): boolean {
  for (let at: ts.Node | undefined = node.parent; at; at = at.parent) {
    if (!ts.isFunctionLike(at)) continue;
    for (const p of at.parameters) {
      if (ts.isIdentifier(p.name) && p.name.text === 'tx') return true;
      if (ts.isObjectBindingPattern(p.name) && p.name.elements.some((e) => e.name.getText() === 'tx')) return true;
    }
  }
  return false;
}

export function transactionStyleViolations(program: ts.Program, files: string[]): Violation[] {
  const checker = program.getTypeChecker();
  const violations: Violation[] = [];
  for (const file of files) {
    const source = program.getSourceFile(file);
    if (!source) throw new Error(`not in the program: ${file}`);
    const service = isServiceFile(file);
    const dbSymbol = service ? importedDb(source, checker) : undefined;
    const report = (node: ts.Node, rule: Violation['rule'], text: string) => {
      const { line } = source.getLineAndCharacterOfPosition(node.getStart());
      violations.push({ file: path.relative(ROOT, file), line: line + 1, rule, text: text.replace(/\s+/g, ' ') });
    };
    const visit = (node: ts.Node) => {
      if (service && dbSymbol && ts.isIdentifier(node) && node.text === 'db' && !ts.isImportSpecifier(node.parent)) {
        const isDefaultOfTx =
          ts.isParameter(node.parent) && node.parent.initializer === node && node.parent.name.getText() === 'tx';
        if (!isDefaultOfTx && checker.getSymbolAtLocation(node) === dbSymbol) {
          report(node, 1, `\`db\` used directly (${node.parent.getText().slice(0, 60)}): take \`tx: Tx = db\` and use tx`);
        }
      }
      if (service && ts.isParameter(node) && isTxParameter(node)) {
        const owner = node.parent as ts.SignatureDeclaration;
        const isLast = owner.parameters[owner.parameters.length - 1] === node;
        if (node.name.getText() !== 'tx' || !isLast) {
          const name = owner.name?.getText() ?? 'a function';
          report(node, 2, `${name}: its Tx parameter must be named tx and come last`);
        }
      }
      if (ts.isCallExpression(node) && hasTxInScope(node)) {
        const callee = omitsTx(node, checker);
        if (callee) report(node, 3, `${callee}(…) is called without its tx`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return violations;
}
