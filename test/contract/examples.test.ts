import t from 'tap';
import { loadContract } from '../../lib/conformance/spec.js';

/**
 * Generators send a declared example as it is, run after run, with whatever
 * body they generate. A header whose value must differ for each intended
 * request (Idempotency-Key: the same key with another body is a 422) must
 * therefore declare no example anywhere a tool reads one (issue 28).
 */
const uniquePerRequest = ['Idempotency-Key'];

t.test('a header that must be new for every request declares no sendable example', async (t) => {
  const { operations } = loadContract();
  let checked = 0;
  for (const operation of operations) {
    for (const parameter of operation.parameters) {
      if (!uniquePerRequest.includes(parameter.name)) continue;
      checked += 1;
      const declared = parameter as unknown as Record<string, unknown>;
      for (const [where, holder] of [
        ['parameter', declared],
        ['schema', parameter.schema],
      ] as const)
        for (const keyword of ['example', 'examples', 'default', 'const', 'enum'])
          t.notOk(keyword in holder, `${operation.operationId} ${parameter.name}: no ${keyword} on the ${where}`);
    }
  }
  t.ok(checked > 0, `${checked} such parameters checked`);
});
