// The comparison by values (lib/contract/admitted.ts) on its own: which values it builds decides what it can show.
import t from 'tap';
import { compareAdmitted, opened } from '../../lib/contract/admitted.js';

t.test('a bound is tried one step past it, where neither side names the value that tells them apart', async (t) => {
  // Only 12 and above tell these apart: the base names 11, the head 10; 12 is 11 + 1.
  const { narrowing } = compareAdmitted(
    { type: 'integer', not: { const: 11 } },
    { type: 'integer', maximum: 10 },
    'test',
  );
  t.ok(
    narrowing.some((finding) => finding.value === 12),
    'finds 12',
    { narrowing },
  );
});

t.test('an object gains a property neither side declares, so closing it shows', async (t) => {
  const open = { type: 'object', properties: { name: { type: 'string' } } };
  const { narrowing } = compareAdmitted(open, { ...open, additionalProperties: false }, 'test');
  t.ok(narrowing.length > 0, 'a value with an unknown property', { narrowing });
  t.ok(
    narrowing.every((finding) => Object.keys(finding.value as object).some((key) => key !== 'name')),
    'each carries a property the head does not declare',
  );
});

t.test('a response base is opened: a new field is no widening, a new value is', async (t) => {
  const pet = {
    type: 'object',
    additionalProperties: false,
    required: ['id'],
    properties: { id: { type: 'integer' }, status: { enum: ['available', 'sold'] } },
  };
  const grown = { ...pet, properties: { ...pet.properties, nickname: { type: 'string' } } };
  t.same(compareAdmitted(pet, grown, 'test', { base: opened(pet), head: grown }).widening, []);
  const widened = { ...pet, properties: { ...pet.properties, status: { enum: ['available', 'sold', 'lost'] } } };
  const { widening } = compareAdmitted(pet, widened, 'test', { base: opened(pet), head: widened });
  t.ok(
    widening.some((finding) => (finding.value as { status?: string }).status === 'lost'),
    'a status the base did not allow',
    { widening },
  );
});
