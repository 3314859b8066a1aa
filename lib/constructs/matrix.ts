// The matrix of docs/constructs.md: one row per construct of the catalogue, one column per machine.
import { catalogue } from './catalogue.js';
import { isRefused, machineIds, machines } from './machines.js';

const cell = (verdict: { supported: string } | { refused: string }) =>
  isRefused(verdict) ? `refused: ${verdict.refused}` : `supported ([test](../${verdict.supported}))`;

export function constructMatrix(): string {
  const header = `| Construct | ${machineIds.map((machine) => machines[machine]).join(' | ')} |`;
  const rule = `|---|${machineIds.map(() => '---').join('|')}|`;
  const rows = catalogue.map(
    (construct) =>
      `| <a id="${construct.id}"></a>\`${construct.id}\` (${construct.group}): ${construct.title.replace(/\|/g, '\\|')} | ` +
      `${machineIds.map((machine) => cell(construct.verdicts[machine]).replace(/\|/g, '\\|')).join(' | ')} |`,
  );
  return [header, rule, ...rows].join('\n');
}
