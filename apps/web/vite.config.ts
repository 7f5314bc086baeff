import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// The app is static: its network settings are fetched at run time from `/config.json`, which the
// server writes from the deployment (the stack file locally, `networks/<name>.json` for test networks),
// so one build serves every network.
export default defineConfig({
  plugins: [react()],
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
          groups: [{ name: "shared", minShareCount: 6 }],
        },
      },
    },
  },
});
