import type { Failure, Findings } from './findings.js';

// Enough examples of one kind of failure to reproduce it; the rest are counted.
const examplesPerKind = 3;

function pad(cells: string[][]): string[] {
  const widths = cells[0]!.map((_, column) => Math.max(...cells.map((row) => row[column]!.length)));
  return cells.map((row) =>
    row
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd(),
  );
}

const kindKey = (failure: Failure) => `${failure.subject} ${failure.status ?? ''} ${failure.check}`;

/** The report for a terminal: failures first (with curl lines), then the table per (operation, status). */
export function textReport(findings: Findings, options: { readOnly: boolean }): string {
  const lines: string[] = [];
  const byKind = new Map<string, Failure[]>();
  for (const failure of findings.failures)
    byKind.set(kindKey(failure), [...(byKind.get(kindKey(failure)) ?? []), failure]);
  for (const failures of byKind.values()) {
    const first = failures[0]!;
    lines.push(
      `FAIL ${first.subject}${first.status === undefined ? '' : ` ${first.status}`}: ${first.check} (${failures.length}x)`,
    );
    for (const failure of failures.slice(0, examplesPerKind)) {
      lines.push(`  ${failure.message.split('\n').join('\n  ')}`);
      if (failure.curl) lines.push(`  ${failure.curl}`);
    }
    if (failures.length > examplesPerKind) lines.push(`  ... and ${failures.length - examplesPerKind} more`);
  }
  if (lines.length > 0) lines.push('');
  const rows = [...findings.rows.values()].sort(
    (a, b) => a.operationId.localeCompare(b.operationId) || a.status - b.status,
  );
  lines.push(
    ...pad([
      ['operation', 'status', 'responses', 'failed', 'undeclared headers'],
      ...rows.map((row) => [
        row.operationId,
        String(row.status),
        String(row.responses),
        String(row.failed),
        [...row.undeclaredHeaders].sort().join(', '),
      ]),
    ]),
  );
  lines.push('');
  for (const note of findings.notes) lines.push(`note: ${note}`);
  lines.push(
    `${findings.sent} requests (${findings.retried} retried after 429/503), ${options.readOnly ? 'read-only: nothing created' : `${findings.created} resources created`}; ` +
      (findings.passed ? 'no contract violation found' : `${findings.failures.length} failures`),
  );
  return `${lines.join('\n')}\n`;
}

// XML 1.0 cannot carry most control characters at all, escaped or not.
// eslint-disable-next-line no-control-regex
const notInXml = /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g;

const xml = (text: string) =>
  text
    .replace(notInXml, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');

/** JUnit XML for CI: one test case per (operation, status) seen and per run-wide check, failed with its failures. */
export function junitReport(findings: Findings): string {
  const cases = new Map<string, Failure[]>();
  for (const row of findings.rows.values()) cases.set(`${row.operationId} ${row.status}`, []);
  for (const failure of findings.failures) {
    const name = failure.status === undefined ? failure.subject : `${failure.subject} ${failure.status}`;
    cases.set(name, [...(cases.get(name) ?? []), failure]);
  }
  if (!cases.has('published contract')) cases.set('published contract', []);
  const failed = [...cases.values()].filter((failures) => failures.length > 0).length;
  const body = [...cases].map(([name, failures]) => {
    if (failures.length === 0) return `    <testcase classname="contract" name="${xml(name)}"/>`;
    const text = failures
      .map((failure) => `${failure.check}: ${failure.message}${failure.curl ? `\n${failure.curl}` : ''}`)
      .join('\n\n');
    const checks = [...new Set(failures.map((failure) => failure.check))].join(', ');
    return [
      `    <testcase classname="contract" name="${xml(name)}">`,
      `      <failure message="${xml(checks)}" type="contract">${xml(text)}</failure>`,
      '    </testcase>',
    ].join('\n');
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="npm run verify" tests="${cases.size}" failures="${failed}">`,
    `  <testsuite name="contract verification" tests="${cases.size}" failures="${failed}">`,
    ...body,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
