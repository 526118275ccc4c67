// No export in src/ that nothing else uses (an export is a promise to other files; one nobody
// keeps is dead weight a reader has to check). References are found by TypeScript's language
// service over every project configuration (Node, Workers, the page, the tests); the benchmark
// and build scripts, plain JavaScript that imports dist/, count by name.
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const CONFIGS = ['tsconfig.json', 'tsconfig.workers.json', 'tsconfig.web.json'];

/** The .mjs files under bench/ and scripts/, whose uses of dist/ the type-checker does not see. */
function scriptText(): string {
  const texts: string[] = [];
  for (const dir of ['bench', 'scripts']) {
    for (const entry of readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })) {
      if (entry.endsWith('.mjs') || entry.endsWith('.cjs')) texts.push(readFileSync(join(root, dir, entry), 'utf8'));
    }
  }
  return texts.join('\n');
}

/** Every exported declaration of src/ (generated and test files aside) that no other file references. */
function unusedExports(): string[] {
  const files = new Set<string>();
  let options: ts.CompilerOptions | undefined;
  for (const name of CONFIGS) {
    const parsed = ts.getParsedCommandLineOfConfigFile(join(root, name), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
    if (parsed === undefined) throw new Error(`${name} does not parse`);
    for (const file of parsed.fileNames) files.add(file);
    options ??= parsed.options;
  }
  const service = ts.createLanguageService({
    getScriptFileNames: () => [...files],
    getScriptVersion: () => '1',
    getScriptSnapshot: (file) => (ts.sys.fileExists(file) ? ts.ScriptSnapshot.fromString(readFileSync(file, 'utf8')) : undefined),
    getCurrentDirectory: () => root,
    getCompilationSettings: () => options ?? {},
    getDefaultLibFileName: ts.getDefaultLibFilePath,
    fileExists: (file) => ts.sys.fileExists(file),
    readFile: (file) => ts.sys.readFile(file),
    readDirectory: (...args) => ts.sys.readDirectory(...args),
  });
  const program = service.getProgram();
  if (program === undefined) throw new Error('no program');
  const scripts = scriptText();
  const unused: string[] = [];
  for (const source of program.getSourceFiles()) {
    const file = source.fileName;
    if (!file.startsWith(join(root, 'src/')) || file.includes('/generated/') || file.endsWith('.test.ts')) continue;
    ts.forEachChild(source, (node) => {
      const exported = ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
      if (!exported) return;
      const names: ts.Node[] = ts.isVariableStatement(node)
        ? node.declarationList.declarations.map((d) => d.name)
        : 'name' in node && node.name !== undefined ? [node.name] : [];
      for (const name of names) {
        const references = (service.findReferences(file, name.getStart()) ?? []).flatMap((r) => r.references);
        const elsewhere = references.some((r) => r.fileName !== file);
        if (!elsewhere && !new RegExp(`\\b${name.getText()}\\b`).test(scripts)) unused.push(`${relative(root, file)}: ${name.getText()}`);
      }
    });
  }
  return unused;
}

describe('exports of src/', () => {
  it('are each used by another file', () => {
    expect(unusedExports()).toEqual([]);
  }, 180_000);
});
