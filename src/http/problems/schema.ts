/** The body of every error response (RFC 9457 `application/problem+json`), as decisions.md fixes it. */
import { z } from 'zod';
import { components } from '../../v1/openapi/components.js';

export const PROBLEM_MEDIA_TYPE = 'application/problem+json';

/** The query parameters a 400 can name in `errors`. */
export const ParameterName = z.enum(['from', 'to']);
export type ParameterName = z.infer<typeof ParameterName>;

export const Problem = z
  .object({
    type: z.literal('about:blank').meta({
      description: 'Always `about:blank`: the HTTP status code is the type of the error.',
    }),
    title: z.string().meta({
      description: 'The HTTP reason phrase of the status, such as `Bad Request` or `Not Found`.',
      examples: ['Bad Request'],
    }),
    status: z.int().min(400).max(599).meta({ description: 'The HTTP status code of the response.' }),
    detail: z.string().optional().meta({
      description: 'What went wrong with this request, for people; the text may change.',
    }),
    instance: z
      .string()
      .optional()
      .meta({
        description: 'The request path without the query string.',
        examples: ['/v1/groundwater-monitoring-wells'],
      }),
    errors: z
      .partialRecord(ParameterName, z.array(z.string()).min(1))
      .optional()
      .meta({
        description:
          'Only with 400: maps each query parameter that has to change (`from`, `to`) to its messages. ' +
          'Missing or malformed parameter: that parameter; `to` not later than `from`, or an interval ' +
          'longer than 366 days: `to`.',
        examples: [{ to: ['must be later than from (2024-01-01T00:00:00Z)'] }],
      }),
  })
  .register(components, { id: 'Problem' });

export type Problem = z.infer<typeof Problem>;
