import { z } from "zod";

import { jsonIntegerJsonSchema } from "@avn/protocol/balance-wire";

/** A JSON Schema object as Fastify and `/openapi.json` take it. */
export type JsonSchemaObject = { [key: string]: unknown; properties: Record<string, Record<string, unknown>>; required?: string[] };

/**
 * The Fastify route schema (JSON Schema draft-07) of a schema of the wire contract (`@avn/protocol`): Fastify
 * validates bodies (`input`) and serializes answers (`output`) with it, and `/openapi.json` documents it, so
 * neither is written by hand. A JSON integer (`jsonInteger`: a number, or a bigint beyond 2^53) becomes one
 * `{"type": "integer"}`, which the serializer writes exactly, also above 2^53.
 */
export function routeSchema(schema: z.core.$ZodType, io: "input" | "output" = "output"): JsonSchemaObject {
  const generated = z.toJSONSchema(schema, {
    io,
    target: "draft-7",
    // A bigint has no JSON Schema; the only one in the contract is inside `jsonInteger`, replaced below.
    unrepresentable: "any",
    override: ({ zodSchema, jsonSchema }) => {
      if (!isJsonInteger(zodSchema)) return;
      delete jsonSchema.anyOf;
      Object.assign(jsonSchema, jsonIntegerJsonSchema);
    },
  }) as JsonSchemaObject & { $schema?: string };
  const { $schema: _dialect, ...routeSchema } = generated;
  return routeSchema;
}

/** A union of an integer and a bigint: `jsonInteger`, or a copy of it with a description. */
function isJsonInteger(schema: z.core.$ZodType): boolean {
  const def = schema._zod.def as { type: string; options?: readonly z.core.$ZodType[] };
  return def.type === "union" && def.options?.map((option) => option._zod.def.type).join() === "number,bigint";
}
