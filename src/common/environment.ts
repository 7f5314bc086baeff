import { z } from "zod";

/** Parses `env` with `schema`; every problem is listed in one error, named after `what`. The result is frozen. */
export function parseEnvironment<Schema extends z.ZodType>(
  schema: Schema,
  env: NodeJS.ProcessEnv,
  what: string,
): Readonly<z.infer<Schema>> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    throw new Error(`invalid ${what}:\n  ${problems.join("\n  ")}`);
  }
  return Object.freeze(parsed.data);
}

/** A URL as it may be logged: its origin only (paths and queries of hosted RPC URLs carry API keys). */
export function urlOrigin(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}/…`;
}

/** A comma-separated setting as its entries: trimmed, empty ones dropped (`a, b,` is `["a", "b"]`). */
export function commaSeparated() {
  return z.string().transform((value) =>
    value
      .split(",")
      .map((entry) => entry.trim())
      .filter((entry) => entry.length > 0),
  );
}

/** A comma-separated list of URLs, at least one, each with a protocol `protocols` accepts. */
export function urlList(protocols: RegExp) {
  return commaSeparated().pipe(z.array(z.url({ protocol: protocols })).min(1));
}
