/**
 * Schemas registered here become named components of the OpenAPI document (`#/components/schemas/…`),
 * so the document says `Well` where a reader expects a name instead of repeating its shape.
 */
import { z } from 'zod';

export const components = z.registry<{ id: string }>();
