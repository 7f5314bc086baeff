/**
 * The V8 flags a long-running service of ours starts with: the circuit node (its image's command too), the
 * API, the challenger, the solver, and the process of `npm start`, `npm run chaos` and `npm run soak`.
 *
 * The young generation is fixed at V8's default maximum on 64-bit (two 16 MiB semi-spaces). Left to itself,
 * V8 starts it at 1 MiB a semi-space, doubles it under load and halves it again after a quiet moment: each
 * step moves the process's resident memory by up to 24 MiB. Measured on a circuit node under the soak's load
 * (inspector, `v8.getHeapSpaceStatistics`): new space 8 → 16 → 32 MiB over the first three minutes while old
 * space stayed at 34 MiB; in a soak, a quiet moment at minute 4 took 22–26 MiB of RSS from every node for
 * up to three minutes. A fixed size costs at most that much once, as each V8 heap of the process first fills
 * it (seconds under load, hours for a heap that allocates slowly: see `STACK_PROCESS_ENV` in
 * src/chaos/hardhat-run.ts), and makes a service's footprint what it will be under load: what a container's
 * memory limit is set from, and what a soak's slope can be read against.
 * `--min-semi-space-size` is refused in NODE_OPTIONS, so these go on the command line.
 */
export const SERVICE_V8_FLAGS: readonly string[] = ["--min-semi-space-size=16", "--max-semi-space-size=16"];
