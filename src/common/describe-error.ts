/**
 * An error in one line without URLs (RPC URLs carry keys): ethers' short message where it has one, and
 * the node's own JSON-RPC error beside it when ethers kept it apart ("could not coalesce error").
 */
export function describeError(error: unknown): string {
  const { shortMessage, message, error: inner } = (error ?? {}) as { shortMessage?: unknown; message?: unknown; error?: { message?: unknown } };
  let text = typeof shortMessage === "string" ? shortMessage : typeof message === "string" ? message : String(error);
  if (typeof inner?.message === "string" && !text.includes(inner.message)) text = `${text}: ${inner.message}`;
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"',)]+/gi, "<url>").split("\n")[0];
}
