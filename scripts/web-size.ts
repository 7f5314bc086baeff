// `npm run size:web`: what a first visit to each page of the web app downloads, from the build's
// manifest (run `npm run build:web` first): the shell that paints first (the entry chunk and its imports),
// then the whole visit (with the wallet and chain half, the page's chunk and every chunk they import), raw
// and gzip-compressed. Vite lists each chunk; this sums them per page.
import { readFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";

interface ManifestChunk {
  file: string;
  css?: string[];
  imports?: string[];
  isEntry?: boolean;
  isDynamicEntry?: boolean;
}

const distDir = path.resolve(import.meta.dirname, "..", "apps", "web", "dist");
let manifest: Record<string, ManifestChunk>;
try {
  manifest = JSON.parse(readFileSync(path.join(distDir, ".vite", "manifest.json"), "utf8")) as Record<string, ManifestChunk>;
} catch {
  console.error("No build manifest: run `npm run build:web` first.");
  process.exit(1);
}

/** Every file a visit that loads `keys` downloads (chunks, their static imports, their CSS). */
function filesOf(keys: string[]): Set<string> {
  const files = new Set<string>();
  const visit = (key: string) => {
    const chunk = manifest[key];
    if (chunk === undefined || files.has(chunk.file)) return;
    files.add(chunk.file);
    for (const css of chunk.css ?? []) files.add(css);
    for (const imported of chunk.imports ?? []) visit(imported);
  };
  keys.forEach(visit);
  return files;
}

const sizeOf = (files: Set<string>) =>
  [...files].reduce(
    (sum, file) => {
      const bytes = readFileSync(path.join(distDir, file));
      return { raw: sum.raw + bytes.length, gzip: sum.gzip + gzipSync(bytes, { level: 9 }).length };
    },
    { raw: 0, gzip: 0 },
  );
const kB = (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`;

const entry = Object.keys(manifest).find((key) => manifest[key].isEntry === true)!;
// The wallet and chain half (apps/web/src/interactive.tsx): every page loads it once the shell is painted.
const interactive = Object.keys(manifest).find((key) => key.endsWith("src/interactive.tsx"));
const pages = Object.keys(manifest)
  .filter((key) => /src\/pages\/\w+Page\.tsx$/.test(key))
  .sort();
const firstPaint = sizeOf(filesOf([entry]));
console.log(`${"page".padEnd(10)} ${"whole visit (raw)".padStart(18)} ${"gzip".padStart(10)} ${"beyond the shell (gzip)".padStart(24)}`);
for (const page of pages) {
  const whole = sizeOf(filesOf([entry, ...(interactive === undefined ? [] : [interactive]), page]));
  const name = path.basename(page, "Page.tsx");
  console.log(
    `${name.padEnd(10)} ${kB(whole.raw).padStart(18)} ${kB(whole.gzip).padStart(10)} ${kB(whole.gzip - firstPaint.gzip).padStart(24)}`,
  );
}
console.log(
  `(the first paint, every page's shell: the entry and its imports, ${kB(firstPaint.raw)} raw, ${kB(firstPaint.gzip)} gzip; ` +
    'the rest loads after it has painted: docs/web.md, "Loading strategy")',
);
