import { z } from "zod";

import { urlOrigin } from "./environment.ts";

/** How a configuration field is shown in a log: a secret as `<set>`, a URL (or a list of them) by its origin. */
export type Redaction = "secret" | "origin";

/** The fields that must not be logged as they are, tagged where the schema declares them. */
const redactions = z.registry<{ redaction: Redaction }>();

/** Declares a secret (a key, a signing secret): logged as `<set>`, or left out when unset. */
export function secret<Schema extends z.ZodType>(schema: Schema): Schema {
  redactions.add(schema, { redaction: "secret" });
  return schema;
}

/**
 * Declares a URL or a list of URLs: logged by origin only (`https://eth.example/…`), since hosted RPC URLs
 * carry their API key in the path, the query or the user part. A value without a scheme, such as a SQLite
 * file where a PostgreSQL URL may also stand, has no credentials to hide and is logged as it is.
 */
export function loggedAsOrigin<Schema extends z.ZodType>(schema: Schema): Schema {
  redactions.add(schema, { redaction: "origin" });
  return schema;
}

/**
 * The configuration as it may be logged, decided by the schema: every field declared secret or URL (see
 * `secret`, `loggedAsOrigin`, and the field helpers of config-fields.ts that use them) and every plain
 * `z.url()` field, tagged or not, is redacted; bigints become decimal strings (JSON has none). Behind the
 * schema, a safety net for a field declared as a plain string: a value written `scheme://…` is still
 * shown by origin only and a value shaped like a private key as `<set>`, so a field added without its
 * helper leaks nothing either.
 */
export function redactConfig(schema: z.ZodObject, config: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const shape: Record<string, z.ZodType | undefined> = schema.shape;
  return Object.fromEntries(Object.entries(config).map(([name, value]) => [name, redactValue(redactionOf(shape[name]), value)]));
}

function redactValue(redaction: Redaction | undefined, value: unknown): unknown {
  if (value === undefined) return undefined;
  if (redaction === "secret") return "<set>";
  if (Array.isArray(value)) return value.map((entry) => redactValue(redaction, entry));
  if (typeof value === "bigint") return value.toString();
  if (typeof value !== "string") return value;
  if (redaction === "origin" || URL_SHAPE.test(value)) return originOf(value);
  if (PRIVATE_KEY_SHAPE.test(value)) return "<set>";
  return value;
}

const URL_SHAPE = /^[a-z][a-z0-9+.-]*:\/\//i;
/** 32 bytes in hex, as private keys are written (`0x` optional). */
const PRIVATE_KEY_SHAPE = /^(?:0x)?[0-9a-f]{64}$/i;

function originOf(value: string): string {
  if (!URL_SHAPE.test(value)) return value;
  try {
    return urlOrigin(value);
  } catch {
    return "<url>"; // not parsable: nothing of it is shown
  }
}

/**
 * The redaction a field's schema declares, looked for through the wrappers fields are built with
 * (`.optional()`, `.default()`, transforms and pipes, arrays). A `z.url()` anywhere is a URL.
 */
function redactionOf(schema: z.ZodType | undefined, depth = 0): Redaction | undefined {
  if (schema === undefined || depth > 8) return undefined;
  const tagged = redactions.get(schema)?.redaction;
  if (tagged !== undefined) return tagged;
  if (schema instanceof z.ZodURL) return "origin";
  const def = schema.def as { type: string; innerType?: z.ZodType; in?: z.ZodType; out?: z.ZodType; element?: z.ZodType };
  switch (def.type) {
    case "optional":
    case "default":
    case "prefault":
    case "nullable":
    case "readonly":
    case "catch":
      return redactionOf(def.innerType, depth + 1);
    case "pipe":
      return redactionOf(def.in, depth + 1) ?? redactionOf(def.out, depth + 1);
    case "array":
      return redactionOf(def.element, depth + 1);
    default:
      return undefined;
  }
}
