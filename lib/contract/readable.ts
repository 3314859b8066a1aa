// The contract commands judge a spec only through constructs they read (docs/constructs.md, the "Contract gate
// and review" column). A head that uses one the catalogue refuses there is refused before anything is compared,
// with npm run generate's report: comparing it would read some keywords and misread others. A base is judged
// whatever it holds: a release cannot change, and one published while a construct was supported must stay
// reviewable; what it holds that is refused today is named, as the places where a change may be misread.
import { assertSupportedBy, refusalReport, refusals } from '../constructs/refusals.js';
import type { LoadedContract } from './load.js';

/** The head, or a ConstructRefusedError naming each refused construct, where it appears and its row. */
export function readableHead(head: LoadedContract): LoadedContract {
  assertSupportedBy('contract', head.document, { source: head.source });
  return head;
}

/** What the base uses that the gate and review refuse today, as a note for stderr; '' when nothing. */
export function baseNote(base: LoadedContract): string {
  const found = refusals(base.document, ['contract']);
  if (found.length === 0) return '';
  return (
    refusalReport(base.source, found) +
    'It is compared all the same, as the base (a release cannot change): a change at those places may be misread.\n'
  );
}
