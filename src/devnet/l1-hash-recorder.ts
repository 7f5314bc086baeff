import { Wallet, type JsonRpcProvider } from "ethers";

import { L1BlockHashes__factory } from "../../typechain-types/index.ts";
import type { DevAccount } from "../common/stack-file.ts";
import { subscribeNewHeads, type HeadSubscription } from "./op/new-heads.ts";

export interface L1HashRecorder {
  /** Resolves once `L1BlockHashes` has recorded L1 block `l1BlockNumber` or a later one. */
  recordedUpTo(l1BlockNumber: bigint): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The keeper of the local stack's `L1BlockHashes` (docs/proofs.md): on every L2 block whose `L1Block`
 * names a block not recorded yet, it calls `record()`, which anyone may. A proof at a recorded block stays
 * verifiable after `L1Block` moves on (a current block is current for one L1 block only: 2 s on the
 * devnet), and the API answers `?proof=true` at the latest recorded block. Operators of a live network
 * run the same duty, every block or only for the blocks they answer at. One call at a time, from its own
 * account, so its nonces never race another service's; a failed call is tried again at the next L2 block.
 */
export async function startL1HashRecorder(options: {
  l2: JsonRpcProvider;
  l2WsUrl: string;
  l1BlockHashes: string;
  keeper: DevAccount;
  onError?: (error: unknown) => void;
}): Promise<L1HashRecorder> {
  // A plain wallet, which asks the node for the pending nonce at each call: calls go one at a time, each waiting for
  // its receipt. A NonceManager counts a call before sending it, so one that failed unsent (an unreachable RPC, no
  // ETH for gas) would leave a gap that every later call waits behind, for good.
  const hashes = L1BlockHashes__factory.connect(options.l1BlockHashes, new Wallet(options.keeper.privateKey, options.l2));
  let recorded = 0n;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  const waiters = new Set<{ number: bigint; resolve: () => void }>();
  const settle = () => {
    for (const waiter of waiters)
      if (waiter.number <= recorded) {
        waiters.delete(waiter);
        waiter.resolve();
      }
  };
  const pass = async () => {
    const [[current], [latest]] = await Promise.all([hashes.current(), hashes.latest()]);
    recorded = latest;
    if (current > latest && current > 0n) {
      await (await hashes.record()).wait();
      recorded = current;
    }
    settle();
  };
  // One pass at a time; a head that arrives meanwhile asks for one more pass after it.
  const wake = () => {
    if (stopped) return;
    if (running !== undefined) {
      again = true;
      return;
    }
    running = pass()
      .catch((error: unknown) => options.onError?.(error))
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          wake();
        }
      });
  };
  const subscription: HeadSubscription = subscribeNewHeads(options.l2WsUrl, wake, (error) => options.onError?.(error));
  await subscription.ready;
  wake();
  return {
    recordedUpTo: (number) =>
      new Promise<void>((resolve) => {
        waiters.add({ number, resolve });
        settle();
      }),
    async stop() {
      stopped = true;
      subscription.close();
      await running;
    },
  };
}
