import { writeFile } from "node:fs/promises";
import path from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

import react from "@vitejs/plugin-react";
import { defineConfig, type Plugin } from "vite";

/**
 * Writes a Brotli (`.br`) and a gzip (`.gz`) copy beside each script, stylesheet and SVG of the build, at the
 * highest levels once, so that the web server sends them compressed without compressing per request
 * (`@fastify/static`'s `preCompressed`). Files under 1 kB gain nothing from it.
 */
function precompress(): Plugin {
  let outDir = "dist";
  return {
    name: "avn-precompress",
    apply: "build",
    configResolved(config) {
      outDir = path.resolve(config.root, config.build.outDir);
    },
    async writeBundle(_options, bundle) {
      const files = Object.values(bundle).filter((output) => /\.(js|css|svg)$/.test(output.fileName));
      for (const output of files) {
        const content = output.type === "chunk" ? Buffer.from(output.code) : Buffer.from(output.source);
        if (content.length < 1024) continue;
        const file = path.join(outDir, output.fileName);
        const brotli = brotliCompressSync(content, { params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY } });
        await writeFile(`${file}.br`, brotli);
        await writeFile(`${file}.gz`, gzipSync(content, { level: constants.Z_BEST_COMPRESSION }));
      }
    },
  };
}

// The app is static: its network settings are fetched at run time from `/config.json`, which the
// server writes from the deployment (the stack file locally, `networks/<name>.json` for test networks),
// so one build serves every network.
export default defineConfig({
  plugins: [react(), precompress()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    sourcemap: true,
    // dist/.vite/manifest.json: which chunks each page loads (`npm run size:web` sums them).
    manifest: true,
    // Each page is its own chunk (React.lazy in App.tsx); the shared wallet code is one vendor chunk.
    chunkSizeWarningLimit: 800,
    rolldownOptions: {
      output: {
        codeSplitting: {
          // The code most pages share (the generated ABIs, TanStack Query's observers, viem's contract
          // actions, TxButton) in one chunk. Left to the automatic split, it is cut along which pages import
          // each module, and a page that imports a part of it (the explorer: the ABIs, not TxButton) cuts it
          // into several files, each compressed on its own: every page's first visit grew by 2-3 kB gzip.
          // Six of the eight pages is the share that keeps the other pages' first visits where they were
          // (measured with `npm run size:web`; five or fewer puts page-only code in everyone's download).
          //
          // What the shell paints with (App.tsx): React, the router, Vite's helper for lazy imports and the
          // module through which the pages ask for the wallet list (lib/wallet-intent.ts). In the shared chunk,
          // any of them would bring the wallet and chain code into the first paint's download (docs/web.md,
          // "Loading strategy").
          groups: [
            {
              name: "shell",
              test: /[\\/]node_modules[\\/](react|react-dom|scheduler|react-router)[\\/]|vite[\\/]preload-helper|[\\/]src[\\/]lib[\\/]wallet-intent\.ts$/,
              priority: 2,
            },
            { name: "shared", minShareCount: 6, priority: 1 },
          ],
        },
      },
    },
  },
});
