import { getBytes, type TransactionReceipt } from "ethers";

import { JsonRpcSubscription } from "../common/json-rpc-subscription.ts";
import type { OpDevnet } from "../devnet/op-devnet.ts";

// What the intent layer's benchmark measures with: when each block of either chain arrived, and what a transaction's
// execution gas was.

/**
 * A transaction's gas: the whole (`gasUsed`), and its execution gas, the whole less the intrinsic 21,000 and the
 * calldata's standard cost (4 per zero byte, 16 per other byte). `floorBound` marks a transaction that paid EIP-7623's
 * calldata floor instead, whose execution gas the receipt does not tell.
 */
export interface GasFigure {
  gasUsed: bigint;
  execution: bigint;
  floorBound: boolean;
}

/**
 * Both chains' new heads: when each block arrived here (wall time), and `until(chain, check)`, which runs `check` now
 * and at each new head of `chain` until it gives a value.
 */
export interface Timeline {
  arrivals: { l1: Map<number, number>; l2: Map<number, number> };
  until<T>(chain: "l1" | "l2", check: () => Promise<T | undefined>): Promise<T>;
  /** When block `number` of `chain` arrived (waiting for it if it has not yet). */
  arrivalOf(chain: "l1" | "l2", number: number): Promise<number>;
  stop(): void;
}

export async function followHeads(devnet: OpDevnet): Promise<Timeline> {
  const waiters = { l1: new Set<() => void>(), l2: new Set<() => void>() };
  const arrivals = { l1: new Map<number, number>(), l2: new Map<number, number>() };
  const subscriptions = (["l1", "l2"] as const).map(
    (chain) =>
      new JsonRpcSubscription({
        url: devnet[chain].wsUrl,
        params: ["newHeads"],
        onEvent: (head) => {
          const number = Number((head as { number?: string }).number);
          if (Number.isSafeInteger(number) && !arrivals[chain].has(number)) arrivals[chain].set(number, performance.now());
          for (const wake of waiters[chain]) wake();
        },
      }),
  );
  for (const subscription of subscriptions) subscription.start();
  const until = <T>(chain: "l1" | "l2", check: () => Promise<T | undefined>) =>
    new Promise<T>((resolve, reject) => {
      let running = false;
      const wake = () => {
        if (running) return;
        running = true;
        check()
          .then((value) => {
            running = false;
            if (value === undefined) return;
            waiters[chain].delete(wake);
            resolve(value);
          })
          .catch((error: unknown) => {
            waiters[chain].delete(wake);
            reject(error instanceof Error ? error : new Error(String(error)));
          });
      };
      waiters[chain].add(wake);
      wake();
    });
  return {
    arrivals,
    until,
    arrivalOf: (chain, number) => until(chain, () => Promise.resolve(arrivals[chain].get(number))),
    stop: () => subscriptions.forEach((subscription) => subscription.stop()),
  };
}

/** A receipt's gas, and its execution gas from the transaction's calldata (`GasFigure`). */
export async function gasOf(devnet: OpDevnet, chain: "l1" | "l2", receipt: TransactionReceipt): Promise<GasFigure> {
  const tx = (await (chain === "l1" ? devnet.l1Provider : devnet.l2Provider).getTransaction(receipt.hash))!;
  const bytes = getBytes(tx.data);
  const zeros = bytes.filter((byte) => byte === 0).length;
  const standard = 21_000n + BigInt(zeros * 4 + (bytes.length - zeros) * 16);
  const floor = 21_000n + BigInt((zeros + (bytes.length - zeros) * 4) * 10);
  const floorBound = receipt.gasUsed === floor && floor > standard;
  return { gasUsed: receipt.gasUsed, execution: receipt.gasUsed - standard, floorBound };
}

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
export const medianBig = (values: bigint[]) => BigInt(Math.round(median(values.map(Number))));
