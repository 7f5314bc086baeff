import { UnsupportedRuntimeError } from "./errors.ts";

/**
 * JSON with exact integers. The API writes balances, block numbers and slots as JSON integers, also above
 * 2^53 (docs/api.md), where `JSON.parse` alone rounds them to the nearest double: 9007199254753337 would
 * read as 9007199254753336. The reviver's third argument (TC39 "JSON.parse source text access") carries
 * each number's text, so an integer that is not a safe integer is read from its text as a bigint; every
 * other number stays a `number`, except one that is not written as an integer yet reads as an integer of
 * 2^52 or more (`4503599627370496.5`, `1e21`): that text is refused, never taken for an integer.
 */

/** An integer of a parsed answer: a `number` when it is a safe integer, else a `bigint` with its exact value. */
export type JsonInteger = number | bigint;

/** The runtimes whose `JSON.parse` passes the source text to revivers. */
export const SUPPORTED_RUNTIMES = "Node.js 22 or newer, Deno 2, Chrome and Edge 114+, Firefox 135+, Safari 18.4+";

const INTEGER_TEXT = /^-?(0|[1-9][0-9]*)$/;

type Reviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown;

/**
 * Parses `text` as JSON, reading integers beyond `Number.MAX_SAFE_INTEGER` as bigints. Throws a
 * `SyntaxError`, as for any malformed JSON, for a number written with a fraction or an exponent whose value
 * is an integer of magnitude 2^52 or more (it cannot be told from a rounded one). Throws an
 * `UnsupportedRuntimeError` (code `UNSUPPORTED_RUNTIME`) naming the supported runtimes when this runtime's
 * `JSON.parse` gives revivers no source text: the SDK refuses to run rather than round a balance silently.
 */
export function parseJsonExact(text: string): unknown {
  assertSourceTextAccess();
  return (JSON.parse as (text: string, reviver: Reviver) => unknown)(text, reviveExactIntegers);
}

/** From 2^52 on, doubles are 1 or more apart: a fraction written there is rounded to an integer. */
const TWO_POW_52 = 2 ** 52;

/**
 * The reviver: a number that is not a safe integer and is written as an integer becomes its exact bigint.
 * A number written otherwise (a fraction, an exponent) whose value is integral with a magnitude of 2^52 or
 * more is refused with a `SyntaxError`, as `JSON.parse` refuses other malformed text: such text was rounded
 * to an integer it may not denote (`4503599627370496.5` reads as 4503599627370496), and would pass for one.
 */
export function reviveExactIntegers(_key: string, value: unknown, context?: { source?: string }): unknown {
  if (typeof value !== "number") return value;
  if (Number.isSafeInteger(value) && Math.abs(value) < TWO_POW_52) return value;
  const source = context?.source;
  // Checked up front by assertSourceTextAccess; kept so that a reviver called without it cannot round.
  if (source === undefined) throw unsupportedRuntime();
  if (INTEGER_TEXT.test(source)) return Number.isSafeInteger(value) ? value : BigInt(source);
  if (Number.isInteger(value))
    throw new SyntaxError(`JSON number ${source} is not an integer literal but reads as the integer ${value}: refused rather than rounded`);
  return value;
}

/** Throws unless `JSON.parse` passes revivers the source text (checked on every parse: it costs one tiny parse). */
export function assertSourceTextAccess(): void {
  let source: unknown;
  (JSON.parse as (text: string, reviver: Reviver) => unknown)("0", (_key, value, context) => {
    source = context?.source;
    return value;
  });
  if (source !== "0") throw unsupportedRuntime();
}

function unsupportedRuntime(): UnsupportedRuntimeError {
  return new UnsupportedRuntimeError(
    "@avn/sdk needs JSON.parse source text access (the reviver's context.source) to read balances above 2^53 exactly, " +
      `and this runtime does not provide it. Supported runtimes: ${SUPPORTED_RUNTIMES}.`,
  );
}
