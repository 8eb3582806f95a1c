import type { operations } from '../../../api/schema';

/** The 200 answer of an operation, as the generated schema types it. */
export type Answer<Op extends keyof operations> = operations[Op]['responses'] extends { 200: { content: { 'application/json': infer T } } } ? T : never;

/** The JSON body an operation takes. */
export type BodyOf<Op extends keyof operations> =
  NonNullable<operations[Op]['requestBody']> extends { content: { 'application/json': infer B } } ? B : never;
