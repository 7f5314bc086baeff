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
  },
});
