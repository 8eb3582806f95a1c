import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';

/**
 * Which test files can reach a database (docs/testing.md, "Keeping the suite quick"). CI runs the
 * suite on PGlite and again on PostgreSQL; the second pass only matters for files whose code can
 * open a database, so it runs only those (OBSERVATORY_TEST_STORAGE_ONLY=1, vitest.config.ts).
 *
 * Decided from the imports, not from names, so nothing has to be kept up to date by hand: a file
 * can reach a database when any module it can load (followed through every import, re-export,
 * dynamic import, require and `new URL('./…', import.meta.url)` file, such as a worker script)
 * is a database driver or starts a process. Anything the reading cannot follow (an import from a
 * computed name, a worker from a computed path) counts as reaching one, so a doubt costs a
 * second run, never coverage. `import type` is skipped: it is erased before the code runs.
 */

/** Packages whose loading means a database can be opened, or a process started that may open one. */
const REACHES_STORAGE = ['pg', '@electric-sql/pglite', 'drizzle-orm/node-postgres', 'drizzle-orm/pglite', 'node:child_process', 'child_process'];

const SCRIPT = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/;

interface ModuleFacts {
  /** Files it loads or may run, resolved. */
  files: string[];
  /** Bare specifiers it imports. */
  packages: string[];
  /** Something it loads or runs could not be followed. */
  unfollowed: boolean;
}

/**
 * How `testFile` (relative to `root`) can reach a database: the chain of modules from it to a
 * driver, a process, or what could not be followed; null when it cannot.
 */
export function storageReachOf(testFile: string, root: string, cache = new Map<string, ModuleFacts>()): string[] | null {
  const seen = new Set<string>();
  const stack: { file: string; path: string[] }[] = [{ file: resolve(root, testFile), path: [] }];
  while (stack.length > 0) {
    const { file, path } = stack.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const here = [...path, relative(root, file)];
    let facts = cache.get(file);
    if (!facts) cache.set(file, (facts = factsOf(file)));
    if (facts.unfollowed) return [...here, '(not followed)'];
    const driver = facts.packages.find((p) => REACHES_STORAGE.some((s) => p === s || p.startsWith(`${s}/`)));
    if (driver) return [...here, driver];
    for (const next of facts.files) stack.push({ file: next, path: here });
  }
  return null;
}

/** The test files (of `files`, relative to `root`) that cannot reach a database. */
export function storageFreeTestFiles(files: string[], root: string): string[] {
  const cache = new Map<string, ModuleFacts>();
  return files.filter((file) => storageReachOf(file, root, cache) === null);
}

/** Every `*.test.ts` under `dirs` (relative to `root`), as `dir/…/name.test.ts`. */
export function testFilesUnder(root: string, dirs: string[]): string[] {
  return dirs.flatMap((dir) =>
    (readdirSync(join(root, dir), { recursive: true }) as string[])
      .filter((f) => f.endsWith('.test.ts'))
      .map((f) => `${dir}/${f.split('\\').join('/')}`),
  );
}

function factsOf(file: string): ModuleFacts {
  const facts: ModuleFacts = { files: [], packages: [], unfollowed: false };
  if (!SCRIPT.test(file)) return facts;
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const follow = (specifier: string) => {
    if (specifier.startsWith('.') || specifier.startsWith('/')) {
      const target = resolveFile(resolve(dirname(file), specifier));
      if (target) facts.files.push(target);
      else facts.unfollowed = true;
    } else facts.packages.push(specifier);
  };
  const literal = (node: ts.Node | undefined): string | null =>
    node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : null;
  let startsWorker = false;
  let urlFiles = 0;
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly) follow(literal(node.moduleSpecifier)!);
    else if (ts.isExportDeclaration(node) && node.moduleSpecifier && !node.isTypeOnly) follow(literal(node.moduleSpecifier)!);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const specifier = literal(node.moduleReference.expression);
      if (specifier === null) facts.unfollowed = true;
      else follow(specifier);
    } else if (ts.isCallExpression(node) && loadsModule(node, source)) {
      const specifier = literal(node.arguments[0]);
      // A computed name is followed only when it can only name JSON (a package's package.json).
      if (specifier !== null) follow(specifier);
      else if (!/\.json`$/.test(node.arguments[0]?.getText(source) ?? '')) facts.unfollowed = true;
    } else if (ts.isNewExpression(node)) {
      const name = node.expression.getText(source);
      if (name === 'Worker') startsWorker = true;
      const first = literal(node.arguments?.[0]);
      if (name === 'URL' && first !== null && first.startsWith('.') && node.arguments?.[1]?.getText(source) === 'import.meta.url') {
        urlFiles += 1;
        const target = resolveFile(resolve(dirname(file), first));
        if (target) facts.files.push(target);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  // A worker's script is only known when the module names a file next to it.
  if (startsWorker && urlFiles === 0) facts.unfollowed = true;
  return facts;
}

/** `import(…)`, `require(…)` and vitest's ways of loading a module by name. */
function loadsModule(call: ts.CallExpression, source: ts.SourceFile): boolean {
  if (call.expression.kind === ts.SyntaxKind.ImportKeyword) return true;
  return ['require', 'vi.importActual', 'vi.importMock', 'vi.mock', 'vi.doMock'].includes(call.expression.getText(source));
}

function resolveFile(base: string): string | null {
  for (const candidate of [base, `${base}.ts`, join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

// `node --import tsx test/storage-files.ts [file…]`: how each test file reaches a database, or that it cannot.
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
  const asked = process.argv.slice(2);
  const files = asked.length > 0 ? asked : testFilesUnder(root, ['src', 'test']).sort();
  const cache = new Map<string, ModuleFacts>();
  let free = 0;
  for (const file of files) {
    const reach = storageReachOf(file, root, cache);
    if (reach === null) free += 1;
    console.log(reach === null ? `no database  ${file}` : `database     ${file}: ${reach.slice(1).join(' > ')}`);
  }
  console.log(`${free} of ${files.length} files cannot reach a database.`);
}
