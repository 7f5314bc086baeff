import { createHash } from "node:crypto";

/** One chunk of Vite's build manifest (`dist/.vite/manifest.json`), the fields read here. */
export interface ManifestChunk {
  file: string;
  imports?: string[];
  isEntry?: boolean;
}
export type BuildManifest = Record<string, ManifestChunk>;

/**
 * The page module of a route: its first path segment names it (`/network` and `/explorer/tx/…` are
 * `src/pages/NetworkPage.tsx` and `src/pages/ExplorerPage.tsx`, the modules App.tsx loads lazily), when the
 * build has such a chunk.
 */
export function pageModuleOf(manifest: BuildManifest, pathname: string): string | undefined {
  const segment = pathname.split("/")[1] ?? "";
  if (!/^[a-z]+$/.test(segment)) return undefined;
  const key = `src/pages/${segment[0].toUpperCase()}${segment.slice(1)}Page.tsx`;
  return manifest[key] === undefined ? undefined : key;
}

/**
 * The files the page module `key` loads that the entry does not already: its chunk and the chunks it
 * imports, transitively. Preloaded from the HTML, they download beside the entry instead of after it has run.
 */
export function pageChunks(manifest: BuildManifest, key: string): string[] {
  const entryFiles = new Set<string>();
  const collect = (start: string, into: Set<string>, seen = new Set<string>()) => {
    const chunk = manifest[start];
    if (chunk === undefined || seen.has(start)) return;
    seen.add(start);
    into.add(chunk.file);
    for (const imported of chunk.imports ?? []) collect(imported, into, seen);
  };
  for (const [name, chunk] of Object.entries(manifest)) if (chunk.isEntry === true) collect(name, entryFiles);
  const files = new Set<string>();
  collect(key, files);
  return [...files].filter((file) => !entryFiles.has(file));
}

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
 * The app's `index.html` for one page: the deployment's settings inline (one round trip less before the app
 * can render) and a `modulepreload` link for each of the page's own chunks (`files`).
 */
export function pageHtml(indexHtml: string, config: unknown, files: readonly string[]): string {
  const tags = [
    `<script type="application/json" id="${CONFIG_ELEMENT_ID}">${scriptSafeJson(config)}</script>`,
    ...files.map((file) => `<link rel="modulepreload" crossorigin href="/${file}">`),
  ];
  const end = indexHtml.indexOf("</head>");
  if (end < 0) return indexHtml + tags.join("");
  return `${indexHtml.slice(0, end)}${tags.map((tag) => `  ${tag}\n`).join("")}${indexHtml.slice(end)}`;
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
