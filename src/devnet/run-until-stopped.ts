import { startLocalStack, type LocalStack } from "./local-stack.ts";

/**
 * Keeps a started local stack running until Ctrl-C (exit 130) or SIGTERM (exit 143), or until one of
 * its chains dies (exit 1), and stops every part on the way out so no child process outlives the command. A crashed
 * circuit node or solver does not stop it: its supervisor restarts it.
 */
export function runUntilStopped(stack: LocalStack): void {
  let stopping = false;
  const stop = async (exitCode: number) => {
    if (stopping) return;
    stopping = true;
    await stack.stop();
    process.exit(exitCode);
  };
  process.once("SIGINT", () => {
    console.log("\nStopping the local stack…");
    void stop(130);
  });
  process.once("SIGTERM", () => void stop(143));
  // A circuit node or the solver that exits is the stack's supervisors' business: they restart it after a crash and
  // say so on the console (src/devnet/supervisor.ts).
  for (const chain of [stack.devnet.l1, stack.devnet.l2]) {
    chain.node.process.once("exit", (code) => {
      if (stopping) return;
      console.error(`Chain ${chain.chainId} stopped unexpectedly (exit code ${code}); stopping the stack.`);
      void stop(1);
    });
  }
}

/**
 * Ctrl-C (exit 130) or SIGTERM (exit 143) stops every part of `stack` before the process exits: for a
 * command that runs a stack for a while and stops it itself when done (`npm run chaos`, `npm run soak`).
 */
export function stopOnSignals(stack: LocalStack): void {
  const stop = (exitCode: number) => () => {
    console.log("\nStopping the local stack…");
    void stack.stop().finally(() => process.exit(exitCode));
  };
  process.once("SIGINT", stop(130));
  process.once("SIGTERM", stop(143));
}

/** Reports a failed start and exits 1 (the stack already cleaned up after itself). */
export function failedToStart(error: unknown): never {
  console.error(`The local stack could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}

/**
 * What `npm start` and `npm run devnet` share: start the stack with progress on the console, keep it
 * running until stopped, or report why it could not start and exit 1.
 */
export async function startLocalStackFromCli(
  projectRoot: string,
  deployContracts: boolean,
  runNetwork = false,
  webPort?: number,
): Promise<LocalStack> {
  try {
    const stack = await startLocalStack({
      projectRoot,
      deployContracts,
      runNetwork,
      webPort,
      onProgress: (line) => console.log(line),
      onServiceError: (service, error) => console.error(`${service}: ${error instanceof Error ? error.message : String(error)} (retrying)`),
      onWebhook: (delivery) => console.log(`webhook delivery ${delivery.deliveryId}: ${delivery.raw}`),
    });
    runUntilStopped(stack);
    return stack;
  } catch (error) {
    failedToStart(error);
  }
}
