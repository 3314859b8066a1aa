import type { ErrorObject } from 'ajv';
import { excerpt } from './excerpt.js';

const largestExactInteger = Number.MAX_SAFE_INTEGER;

const partNames: Record<string, string> = {
  body: 'body',
  querystring: 'query parameter',
  params: 'path parameter',
  headers: 'header',
};

/** What a string of each format must be, in words (the service's formats: src/http/operations/ajv.ts). */
const formatRules: Record<string, string> = {
  date: 'must be a date, YYYY-MM-DD (RFC 3339 full-date), with a year from 0001 to 9999',
  'date-time':
    'must be a date and time with its offset, YYYY-MM-DDThh:mm:ssZ or +hh:mm (RFC 3339), ' +
    'with a year from 0001 to 9999 and an offset within +-15:59',
  time: 'must be a time with its offset, hh:mm:ssZ or +hh:mm (RFC 3339)',
  email: 'must be an email address',
  uuid: 'must be a UUID (RFC 9562)',
  uri: 'must be an absolute URI (RFC 3986)',
};

/** A pattern short enough to read is quoted; a longer one is not a message. */
const quotedPatternMax = 40;
/** The most of a schema's description a message repeats. */
const wordsMax = 200;

/** The first sentence of a description, on one line, at most wordsMax characters. */
function firstSentence(description: string): string {
  const sentence = (/^[\s\S]*?[.!?](?=\s|$)/.exec(description.trim().split(/\n\s*\n/)[0] ?? '')?.[0] ?? description)
    .replace(/\s+/g, ' ')
    .trim();
  if (sentence.length <= wordsMax) return sentence;
  return `${sentence.slice(0, wordsMax - 3).replace(/\s+\S*$/, '')}...`;
}

/**
 * What a pattern expects, without quoting a long pattern at the consumer: the
 * first sentence of the schema's description (its title first), else the
 * pattern when it is short, else a generic sentence. The field is named by the caller.
 */
function patternRule(error: ErrorObject): string {
  const schema = (error.parentSchema ?? {}) as { title?: unknown; description?: unknown };
  const pattern = String((error.params as Record<string, unknown>)['pattern']);
  const words =
    typeof schema.title === 'string' ? schema.title : typeof schema.description === 'string' ? schema.description : '';
  if (words.trim() !== '') return `does not match the expected format: ${firstSentence(words)}`;
  if (pattern.length <= quotedPatternMax) return `must match the pattern ${pattern}`;
  return 'does not match the expected format';
}

function describeRule(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'enum':
      return `must be one of: ${(params['allowedValues'] as unknown[]).join(', ')}`;
    case 'maximum':
      return params['limit'] === largestExactInteger
        ? `must be <= ${largestExactInteger} (larger integers cannot be represented exactly and would be silently rounded)`
        : `must be <= ${String(params['limit'])}`;
    case 'pattern':
      return patternRule(error);
    case 'format':
      return typeof params['format'] === 'string'
        ? (formatRules[params['format']] ?? `must be a valid ${excerpt(params['format'])}`)
        : (error.message ?? 'is invalid');
    default:
      return error.message ?? 'is invalid';
  }
}

/**
 * A sentence naming the field that broke the contract, and the rule it broke.
 * Names that come from the request (an unknown property, a field path) are
 * quoted as excerpts: the message stays short whatever the client sent.
 */
export function validationMessage(errors: ErrorObject[] | undefined, context: string | undefined): string {
  const error = errors?.[0];
  const part = partNames[context ?? ''] ?? context ?? 'request';
  if (!error) return `The ${part} is invalid.`;
  const params = error.params as Record<string, unknown>;
  const field = excerpt(error.instancePath.split('/').slice(1).join('.'));
  if (error.keyword === 'required') {
    const missing = excerpt(String(params['missingProperty']));
    return part === 'body' ? `body must have required property '${missing}'` : `${part} '${missing}' is required`;
  }
  if (error.keyword === 'additionalProperties') {
    const extra = excerpt(String(params['additionalProperty']));
    return extra === 'id' && part === 'body'
      ? "body must not have property 'id': the service assigns it"
      : `${part} must not have property '${extra}'`;
  }
  if (field === '') return `${part} ${describeRule(error)}`;
  return part === 'body' ? `body.${field} ${describeRule(error)}` : `${part} '${field}' ${describeRule(error)}`;
}
