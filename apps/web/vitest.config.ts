import { defineConfig } from "vitest/config";

// The app's pure logic (amounts, formatting, governance drafts and status, event decoding) under Vitest, in
// Node: no browser and no DOM, since what is tested renders nothing. The tests live in `test/`, outside
// `src/`: the production build (which bundles only what `index.html` imports) never sees them, and
// editing one does not make the build stale (`src/web/web-build.ts` watches `src/`).
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    environment: "node",
    // Dates in the expected texts are in UTC, whatever the machine's zone. Child processes (the default
    // `forks` pool) take it; worker threads would not.
    env: { TZ: "UTC" },
    // The tests share no state, and each file would otherwise import viem and the generated ABIs afresh:
    // one process for several files runs them about four times faster.
    isolate: false,
  },
});
