/** The body of every error response (RFC 9457 `application/problem+json`). */
import { z } from 'zod';

export const PROBLEM_MEDIA_TYPE = 'application/problem+json';

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
    // Any parameter of the route's query schema may be named: a closed list here would turn the 400 of
    // a parameter added later into a 500.
    errors: z
      .record(z.string(), z.array(z.string()).min(1))
      .optional()
      .meta({
        description:
          "Only with 400: maps each query parameter that has to change (one of the operation's " +
          'parameters) to its messages. Missing or malformed parameter: that parameter; a rule between ' +
          'parameters names the one to change (the operation says which).',
        examples: [{ to: ['must be later than from'] }],
      }),
  })
  .meta({
    description: 'What went wrong, as an RFC 9457 problem document: the body of every error response.',
  });

export type Problem = z.infer<typeof Problem>;
