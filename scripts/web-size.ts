// `npm run size:web`: what a first visit to each page of the web app downloads, from the build's
// manifest (run `npm run build:web` first): the entry chunk, the page's chunk and every chunk either
// imports, raw and gzip-compressed. Vite lists each chunk; this sums them per page.
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
const pages = Object.keys(manifest)
  .filter((key) => /src\/pages\/\w+Page\.tsx$/.test(key))
  .sort();
const shared = sizeOf(filesOf([entry]));
console.log(`${"page".padEnd(10)} ${"first visit (raw)".padStart(18)} ${"gzip".padStart(10)} ${"page only (gzip)".padStart(18)}`);
for (const page of pages) {
  const whole = sizeOf(filesOf([entry, page]));
  const name = path.basename(page, "Page.tsx");
  console.log(
    `${name.padEnd(10)} ${kB(whole.raw).padStart(18)} ${kB(whole.gzip).padStart(10)} ${kB(whole.gzip - shared.gzip).padStart(18)}`,
  );
}
console.log(`(the entry alone, shared by every page: ${kB(shared.raw)} raw, ${kB(shared.gzip)} gzip)`);
