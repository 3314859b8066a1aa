import type { Change, Direction, Level, OperationRef } from './change.js';
import { sentence } from './consumer.js';

/** A change as a rule makes it; its consumer's sentence is filled from the rule when the rule gives none. */
export type Emitted = Omit<Change, 'consumer'> & { consumer?: string };

/** Reports changes of one operation (or of the components, without one). */
export class Reporter {
  readonly changes: Change[] = [];
  constructor(readonly operation?: OperationRef) {}
  emit = (change: Emitted) => {
    this.changes.push({ ...change, consumer: change.consumer || sentence(change) });
  };
  add(
    rule: string,
    level: Level,
    direction: Direction,
    message: string,
    pointer: string,
    side: 'head' | 'base' = 'head',
    values: Pick<Change, 'before' | 'after'> = {},
  ) {
    this.emit({
      rule,
      level,
      direction,
      ...(this.operation ? { operation: this.operation } : {}),
      pointer,
      side,
      message,
      ...values,
    });
  }
}
