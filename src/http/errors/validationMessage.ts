import type { ErrorObject } from 'ajv';
import { excerpt } from './excerpt.js';

const largestExactInteger = Number.MAX_SAFE_INTEGER;

const partNames: Record<string, string> = {
  body: 'body',
  querystring: 'query parameter',
  params: 'path parameter',
  headers: 'header',
};

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
      return error.instancePath.endsWith('/name')
        ? 'must not contain control characters or unpaired UTF-16 surrogates'
        : `must match the pattern ${String(params['pattern'])}`;
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
