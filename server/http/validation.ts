import type { z } from 'zod';
import { AppError, type ErrorLocation, type ValidationIssue } from '@/server/errors';

/** zod issues → FastAPI-style `detail` entries with `loc` starting at path/query/body. */
function toValidationIssues(where: ErrorLocation[0], error: z.ZodError): ValidationIssue[] {
  return error.issues.map((issue) => {
    const loc = [where, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))] as ErrorLocation;
    const missing = issue.code === 'invalid_type' && (issue as { input?: unknown }).input === undefined;
    return missing
      ? { loc, msg: 'Field required', type: 'missing' }
      : { loc, msg: issue.message, type: customType(issue) ?? (issue.code === 'custom' ? 'value_error' : issue.code) };
  });
}

/** A refinement may name its FastAPI-style type, e.g. `params: { type: 'missing' }`. */
function customType(issue: z.core.$ZodIssue): string | undefined {
  const type = issue.code === 'custom' ? (issue.params as { type?: unknown } | undefined)?.type : undefined;
  return typeof type === 'string' ? type : undefined;
}

/**
 * `value` parsed by `schema`, or a 422 listing every problem. `alsoCheck` are further schemas the
 * value must pass (their output unused): their problems join the same answer, so one 422 still lists
 * everything wrong with the request.
 */
export function parseOrThrow<T extends z.ZodType>(
  where: ErrorLocation[0],
  schema: T,
  value: unknown,
  ...alsoCheck: z.ZodType[]
): z.output<T> {
  const result = schema.safeParse(value, { reportInput: true });
  const issues = result.success ? [] : toValidationIssues(where, result.error);
  for (const check of alsoCheck) {
    const checked = check.safeParse(value, { reportInput: true });
    if (!checked.success) issues.push(...toValidationIssues(where, checked.error));
  }
  if (!result.success || issues.length > 0) throw new AppError('validation', 'Validation error', { issues });
  return result.data;
}
