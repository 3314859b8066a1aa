import type { Change, Direction, Level, OperationRef } from './change.js';

/** Reports changes of one operation (or of the components, without one). */
export class Reporter {
  readonly changes: Change[] = [];
  constructor(readonly operation?: OperationRef) {}
  emit = (change: Change) => {
    this.changes.push(change);
  };
  add(
    rule: string,
    level: Level,
    direction: Direction,
    message: string,
    pointer: string,
    side: 'head' | 'base' = 'head',
  ) {
    this.emit({
      rule,
      level,
      direction,
      ...(this.operation ? { operation: this.operation } : {}),
      pointer,
      side,
      message,
    });
  }
}
