// The first-party client's public API as a consumer's compiler sees it, for two contracts: the repo's client
// generator (generators/apiTypes.ts, then generators/client.ts) writes each side's client into a folder of its own,
// beside a copy of the hand-written transport; one TypeScript program over both folders then spells every export
// of the package's entry (src/index.ts) with its types expanded, and every method of PetStore. A body type that
// becomes `unknown` is a change here even though every declaration's text is the same.
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type TypeScript from 'typescript';
import { apiTypesSource } from '../../generators/apiTypes.js';
import { writeClient } from '../../generators/client.js';
import { parse, stringify } from 'yaml';
import type { Level } from '../../lib/contract/change.js';
import { keysSorted, type JsonObject } from '../../lib/openapi/json.js';
import { repoRoot } from '../../lib/repoRoot.js';

// TypeScript is CommonJS: required, it loads without the scan of its 9 MB for named exports that Node runs for
// an import (about 0.7 s of CPU for the import, 0.3 s required, measured in one process each).
const ts = createRequire(import.meta.url)('typescript') as typeof TypeScript;

/** Declaration name ("PetStore.createPet", "NewPet", "apiVersion") -> its text with types expanded. */
export type Declarations = Map<string, string>;

/** What the generator made of a contract: its declarations, or the generator's refusal. */
export type ClientOf = { declarations: Declarations } | { refused: string };

export interface DeclarationChange {
  name: string;
  /**
   * What it does to code written against the base, judged by names alone: removed breaks it, added is new to it; a
   * changed declaration is none here, as its types come from the schemas the wire diff judges.
   */
  level: Level;
  /** The type of the schema of that name in components/schemas (set by the review). */
  schema?: true;
  before?: string;
  after?: string;
}

export interface ClientChanges {
  /** A side the generator refused, with its reason: the client cannot be built from that contract. */
  refused: { base?: string; head?: string };
  added: DeclarationChange[];
  removed: DeclarationChange[];
  changed: DeclarationChange[];
}

const clientSource = join(repoRoot, 'clients/typescript/src');

/** Writes one side's client with the repo's generator; the reason when the generator refuses the contract. */
async function generate(folder: string, contract: { document: JsonObject; text: string }): Promise<string | undefined> {
  mkdirSync(join(folder, 'src/generated'), { recursive: true });
  for (const name of readdirSync(clientSource))
    if (name.endsWith('.ts')) copyFileSync(join(clientSource, name), join(folder, 'src', name));
  writeFileSync(join(folder, 'openapi.yaml'), contract.text);
  try {
    writeFileSync(join(folder, 'api.ts'), await apiTypesSource(structuredClone(contract.document)));
    // In this process: a process of its own per side cost 1.5 s of CPU each (node, tsx, prettier), more than the
    // generator's own work.
    await writeClient(join(folder, 'api.ts'), folder, join(folder, 'openapi.yaml'));
    return undefined;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return (message.split('\n')[0] || 'failed').trim();
  }
}

// Whole types (no "... 3 more ..."), an alias's structure rather than its name, methods as arrows.
const format = (ts.TypeFormatFlags.NoTruncation |
  ts.TypeFormatFlags.InTypeAlias |
  ts.TypeFormatFlags.WriteArrowStyleSignature) as TypeScript.TypeFormatFlags;

/** An interface's members spelled out: the checker prints an interface by its name alone. */
function membersOf(checker: TypeScript.TypeChecker, type: TypeScript.Type, at: TypeScript.Node): string {
  const members = checker.getPropertiesOfType(type).map((property) => {
    const optional = property.flags & ts.SymbolFlags.Optional ? '?' : '';
    const propertyType = checker.getTypeOfSymbolAtLocation(property, property.valueDeclaration ?? at);
    return `${property.getName()}${optional}: ${checker.typeToString(propertyType, undefined, format)}`;
  });
  return `{ ${members.join('; ')} }`;
}

/**
 * A member's name as code spells it: the checker names one keyed by a well-known symbol `__@toStringTag@216`, its
 * number differing from one compiler run to the next.
 */
const nameOf = (member: TypeScript.Symbol) => member.getName().replace(/^__@(\w+)@\d+$/, '[Symbol.$1]');

/** Every export of `entry`, and each public method of its exported classes, with types expanded. */
function declarationsOf(checker: TypeScript.TypeChecker, entry: TypeScript.SourceFile): Declarations {
  const declarations: Declarations = new Map();
  const moduleSymbol = checker.getSymbolAtLocation(entry);
  if (!moduleSymbol) return declarations;
  for (const exported of checker.getExportsOfModule(moduleSymbol)) {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    const name = exported.getName();
    if (symbol.flags & ts.SymbolFlags.Class) {
      const declaration = symbol.valueDeclaration ?? symbol.declarations?.[0];
      if (!declaration) continue;
      const instance = checker.getDeclaredTypeOfSymbol(symbol);
      for (const member of checker.getPropertiesOfType(instance)) {
        const memberDeclaration = member.valueDeclaration;
        if (!memberDeclaration || member.getName().startsWith('#')) continue;
        const memberName = nameOf(member);
        const modifiers = ts.getCombinedModifierFlags(memberDeclaration);
        if (modifiers & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) continue;
        const type = checker.getTypeOfSymbolAtLocation(member, declaration);
        const signatures = type.getCallSignatures();
        const deprecated = ts.getJSDocDeprecatedTag(memberDeclaration) ? '@deprecated ' : '';
        declarations.set(
          `${name}.${memberName}`,
          signatures.length > 0
            ? signatures
                .map(
                  (signature) => `${deprecated}${memberName}${checker.signatureToString(signature, undefined, format)}`,
                )
                .join('\n')
            : `${deprecated}${memberName}: ${checker.typeToString(type, undefined, format)}`,
        );
      }
    } else if (symbol.flags & ts.SymbolFlags.Interface) {
      declarations.set(name, `interface ${name} ${membersOf(checker, checker.getDeclaredTypeOfSymbol(symbol), entry)}`);
    } else if (symbol.flags & ts.SymbolFlags.TypeAlias) {
      const declaration = symbol.declarations?.[0];
      const deprecated = declaration && ts.getJSDocDeprecatedTag(declaration) ? '@deprecated ' : '';
      declarations.set(
        name,
        `${deprecated}type ${name} = ${checker.typeToString(checker.getDeclaredTypeOfSymbol(symbol), undefined, format)}`,
      );
    } else if (symbol.flags & ts.SymbolFlags.Value) {
      const declaration = symbol.valueDeclaration ?? entry;
      declarations.set(
        name,
        `${name}: ${checker.typeToString(checker.getTypeOfSymbolAtLocation(symbol, declaration), undefined, format)}`,
      );
    }
  }
  return declarations;
}

/**
 * Each exported object type's structure, where another declaration spells it out, replaced by its name (longest
 * first, so `Pets` before `Pet`): a field added to `Pet` is one change of `Pet`, not one of every method that
 * answers with it. A type that is no object (`unknown`, a union of strings) is left spelled out, so a body that
 * becomes `unknown` shows in the method's signature too.
 */
function withTypeNames(declarations: Declarations): Declarations {
  const ownOf = (name: string, text: string) => new RegExp(`^(?:@deprecated )?type ${name} = `).exec(text)?.[0];
  const named = [...declarations]
    .flatMap(([name, text]) => {
      const structure = text.slice(ownOf(name, text)?.length ?? text.length);
      return structure.includes('{') ? [{ name, structure }] : [];
    })
    .sort((a, b) => b.structure.length - a.structure.length);
  return new Map(
    [...declarations].map(([name, text]) => {
      const own = ownOf(name, text) ?? '';
      let body = text.slice(own.length);
      for (const type of named) if (type.name !== name) body = body.split(type.structure).join(type.name);
      return [name, `${own}${body}`];
    }),
  );
}

/** What each contract text has produced in this process: a review of many heads against one base builds it once. */
const made = new Map<string, ClientOf>();

/**
 * A contract with every object's keys in one order: the generators write types, methods and members in the order
 * they meet them, so two contracts that differ only in key order (the same contract) give the same declarations.
 */
const inKeyOrder = ({ document, text }: { document: JsonObject; text: string }) => ({
  document: keysSorted(document),
  text: stringify(keysSorted(parse(text, { intAsBigInt: true }))),
});

/** The client each contract produces, generated and compiled side by side (one compiler run for all). */
export async function clientsOf(written: Array<{ document: JsonObject; text: string }>): Promise<ClientOf[]> {
  const contracts = written.map(inKeyOrder);
  const missing = [...new Map(contracts.filter(({ text }) => !made.has(text)).map((c) => [c.text, c])).values()];
  if (missing.length > 0) {
    const root = mkdtempSync(join(tmpdir(), 'pets-review-client-'));
    try {
      const folders = missing.map((_, index) => join(root, String(index)));
      const refusals = await Promise.all(missing.map((contract, index) => generate(folders[index]!, contract)));
      const entries = folders.map((folder) => join(folder, 'src/index.ts'));
      const program = ts.createProgram(
        entries.filter((_, index) => refusals[index] === undefined),
        compilerOptions,
      );
      const checker = program.getTypeChecker();
      missing.forEach((contract, index) => {
        const refused = refusals[index];
        const source = program.getSourceFile(entries[index]!);
        made.set(
          contract.text,
          refused !== undefined
            ? { refused }
            : { declarations: source ? withTypeNames(declarationsOf(checker, source)) : new Map() },
        );
      });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
  return contracts.map(({ text }) => made.get(text)!);
}

/** The client package's own settings (clients/typescript/tsconfig.json) that change what a type is. */
const compilerOptions: TypeScript.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
  types: [],
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  skipLibCheck: true,
  noEmit: true,
};

export function compareClients(base: ClientOf, head: ClientOf): ClientChanges {
  const changes: ClientChanges = { refused: {}, added: [], removed: [], changed: [] };
  if ('refused' in base) changes.refused.base = base.refused;
  if ('refused' in head) changes.refused.head = head.refused;
  if ('refused' in base || 'refused' in head) return changes;
  for (const [name, after] of head.declarations) {
    const before = base.declarations.get(name);
    if (before === undefined) changes.added.push({ name, level: 'additive', after });
    else if (before !== after) changes.changed.push({ name, level: 'none', before, after });
  }
  for (const [name, before] of base.declarations)
    if (!head.declarations.has(name)) changes.removed.push({ name, level: 'breaking', before });
  return changes;
}
