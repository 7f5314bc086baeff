import { Contract, NonceManager, Wallet, ZeroHash, type Provider } from "ethers";

import { DELEGATE_REGISTRY_ABI, DELEGATE_REGISTRY_ADDRESS } from "@avn/protocol/delegations";
import type { StackFile } from "../common/stack-file.ts";
import { evaluateDemoCondition } from "./demo-conditions.ts";

/** What the demo sees at one moment: the hot wallet's ERC-721 balance with and without delegations, and a signed verdict. */
export interface DelegationSnapshot {
  withDelegations: bigint;
  without: bigint;
  /** The wallets `include_delegations` counted. */
  wallets: string[];
  /** A signed verdict that the hot wallet holds the cold wallet's tokens, delegations counted. */
  verdict: boolean;
  /** What the deployed verifier's view says of that verdict's signatures. */
  verdictValid: boolean;
}

export interface DelegationDemo {
  cold: string;
  hot: string;
  erc721: string;
  /** After `delegateAll(hot, 0x0, true)`. */
  delegated: DelegationSnapshot;
  /** After `delegateAll(hot, 0x0, false)`: v2 revokes with the same call (v1's `revokeAll` is gone). */
  revoked: DelegationSnapshot;
}

/**
 * The stack's demo holder (the cold wallet, holding the demo ERC-721 on the EVM source) delegates everything
 * to a fresh hot wallet through delegate.xyz v2, from a default ethers wallet; the API then counts its tokens for
 * the hot wallet only with `include_delegations`, and a quorum signs a verdict with `"delegations": true`,
 * which the verifier accepts. Revoked, both give 0 again.
 */
export async function runDelegationDemo(stack: StackFile, l1: Provider, l2: Provider): Promise<DelegationDemo> {
  const cold = new NonceManager(new Wallet(stack.accounts!.demoHolder.privateKey, l1));
  const coldAddress = await cold.getAddress();
  const held = stack.demo!.evm.find((entry) => entry.kind === "erc721" && entry.user_address.toLowerCase() === coldAddress.toLowerCase());
  if (held === undefined) throw new Error("the stack file lists no demo ERC-721 held by the demo holder");
  const erc721 = held.contract_address;
  const hot = Wallet.createRandom().address;
  const registry = new Contract(DELEGATE_REGISTRY_ADDRESS, DELEGATE_REGISTRY_ABI, cold);
  const snapshot = (block: bigint) => snapshotOf(stack, l2, { hot, erc721, coldBalance: BigInt(held.balance), block });

  const delegate = async (enable: boolean) =>
    (await (await registry.getFunction("delegateAll").send(hot, ZeroHash, enable)).wait())!.blockNumber;
  const delegated = await snapshot(BigInt(await delegate(true)));
  const revoked = await snapshot(BigInt(await delegate(false)));
  return { cold: coldAddress, hot, erc721, delegated, revoked };
}

/**
 * The snapshot of answers made at `block` (the delegation's) or later. The API's processes each cache the head
 * for up to a second, so an answer about an earlier block is asked again: the batch route and a verdict both
 * say which block they read.
 */
async function snapshotOf(
  stack: StackFile,
  l2: Provider,
  at: { hot: string; erc721: string; coldBalance: bigint; block: bigint },
): Promise<DelegationSnapshot> {
  const item = { user_address: at.hot, contract_address: at.erc721 };
  const balances = await askUntil(`an answer at block ${at.block} or later`, async () => {
    const response = await fetch(`${stack.api!.baseUrl}/api/ccq-evm/batch`, {
      method: "POST",
      headers: { authorization: stack.api!.apiKey, "content-type": "application/json" },
      body: JSON.stringify([{ ...item, include_delegations: true }, item]),
    });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`the API answered ${response.status}: ${text}`);
    // An ERC-721 count and a block number: far below 2^53.
    const { data } = JSON.parse(text) as {
      data: { blockNumber: number; results: Array<{ data: { asset: { balance: number }; wallets?: string[] } }> };
    };
    return BigInt(data.blockNumber) >= at.block ? data.results.map((result) => result.data) : undefined;
  });
  const condition = { chain: "ethereum", contract_address: at.erc721, min: at.coldBalance.toString(), delegations: true };
  const evaluated = await askUntil(`a verdict at block ${at.block} or later`, async () => {
    const answer = await evaluateDemoCondition(stack, l2, { owners: { ethereum: at.hot }, condition }, true);
    return answer.signed!.attestation.ethereumBlock >= at.block ? answer : undefined;
  });
  return {
    withDelegations: BigInt(balances[0].asset.balance),
    without: BigInt(balances[1].asset.balance),
    wallets: balances[0].wallets ?? [],
    verdict: evaluated.verdict,
    verdictValid: evaluated.signed!.valid,
  };
}

/** Asks `ask` until it answers, a quarter of a second apart, for at most 30 s. */
async function askUntil<T>(what: string, ask: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const answer = await ask();
    if (answer !== undefined) return answer;
    if (Date.now() > deadline) throw new Error(`no ${what} within 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
