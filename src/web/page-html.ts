import { createHash } from "node:crypto";

/** `value` as JSON that is safe inside a `<script>` element: no `</script>` or `<!--` can end or bend it. */
function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

/** The element that carries the deployment's settings in the page (main.tsx reads it instead of fetching them). */
export const CONFIG_ELEMENT_ID = "avn-network-config";

/**
 * The app's `index.html` with the deployment's settings inline: one round trip less before the app can render.
 * Vite's own `modulepreload` links (the entry's imports) are already in it; the page's own chunks are not
 * named: the shell loads them once it has painted, so they do not compete with it (docs/web.md, "Loading
 * strategy").
 */
export function pageHtml(indexHtml: string, config: unknown): string {
  const tag = `<script type="application/json" id="${CONFIG_ELEMENT_ID}">${scriptSafeJson(config)}</script>`;
  const end = indexHtml.indexOf("</head>");
  if (end < 0) return indexHtml + tag;
  return `${indexHtml.slice(0, end)}  ${tag}\n${indexHtml.slice(end)}`;
}

/**
 * The CSP sources (`'sha256-…'`) of the inline scripts of `html` that run (no `src`, a JavaScript type): what
 * the policy must name for them to run, and nothing else inline.
 */
export function inlineScriptHashes(html: string): string[] {
  const hashes: string[] = [];
  for (const match of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)) {
    const [, attributes, body] = match;
    if (/\bsrc\s*=/i.test(attributes)) continue;
    const type = /\btype\s*=\s*["']?([^"'\s>]+)/i.exec(attributes)?.[1]?.toLowerCase();
    if (type !== undefined && type !== "module" && type !== "text/javascript") continue;
    hashes.push(`'sha256-${createHash("sha256").update(body, "utf8").digest("base64")}'`);
  }
  return hashes;
}
