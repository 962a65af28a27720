/**
 * What an endpoint contributes to the OpenAPI document (its openapi.ts): its tag and its path item, made
 * from the zod schemas that validate its request and write its response. zod-openapi turns them into
 * OpenAPI: each query parameter from the route's query schema, required unless optional or defaulted.
 */
import type { z } from 'zod';
import type { ZodOpenApiOperationObject, ZodOpenApiPathItemObject, ZodOpenApiPathsObject } from 'zod-openapi';

/** A group of operations, listed with its description at the top of the document. */
export interface Tag {
  name: string;
  description: string;
}

export interface DocumentPart {
  tag: Tag;
  paths: ZodOpenApiPathsObject;
  /** The schemas the part names, each a component (`#/components/schemas/…`) wherever it is used. */
  schemas?: Record<string, z.ZodType>;
}

/** `/a/:b/c` → `/a/{b}/c`: OpenAPI names path parameters in braces. */
export const openApiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}');

type Operation = ZodOpenApiOperationObject & {
  operationId: string;
  summary: string;
  description: string;
  tags: [string];
};

/**
 * The GET of a path, its only operation. HEAD (GET without the body) and the 405 of every other method
 * hold for every path alike: the document's description says so once (document.ts), so that clients
 * generated from it get one method per path, not a twin and six calls that always fail.
 */
export const readOnlyPathItem = (get: Operation): ZodOpenApiPathItemObject => ({ get });
