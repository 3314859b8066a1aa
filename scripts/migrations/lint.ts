import { spawnSync } from 'node:child_process';
import { isAbsolute, join } from 'node:path';
import { repoRoot } from '../../lib/repoRoot.js';

/** One squawk finding: a rule a migration breaks, where, and squawk's words. */
export interface LintFinding {
  file: string;
  /** 1-based. */
  line: number;
  rule: string;
  message: string;
}

interface SquawkViolation {
  file: string;
  line: number;
  rule_name: string;
  message: string;
  help: string | null;
}

/**
 * squawk (squawk-cli, its binary from a per-platform optional dependency)
 * on the given migrations with .squawk.toml; a `-- squawk-ignore <rule>`
 * comment in a migration accepts that rule for the statement after it.
 */
export function lintMigrations(files: string[], root = repoRoot): LintFinding[] {
  if (files.length === 0) return [];
  const result = spawnSync(
    join(root, 'node_modules', '.bin', 'squawk'),
    ['--config', join(root, '.squawk.toml'), '--reporter', 'json', ...files],
    { cwd: root, encoding: 'utf8' },
  );
  if (result.error) throw new Error(`squawk did not run (npm ci installs squawk-cli): ${result.error.message}`);
  let violations: SquawkViolation[];
  try {
    violations = JSON.parse(result.stdout || '[]') as SquawkViolation[];
  } catch {
    throw new Error(`squawk exited with ${result.status}: ${`${result.stdout}\n${result.stderr}`.trim()}`);
  }
  if (result.status !== 0 && violations.length === 0)
    throw new Error(`squawk exited with ${result.status}: ${result.stderr.trim()}`);
  return violations.map((violation) => ({
    file: isAbsolute(violation.file) ? violation.file : join(root, violation.file),
    line: violation.line + 1,
    rule: violation.rule_name,
    message: `${violation.message}${violation.help ? ` ${violation.help}` : ''}`,
  }));
}
