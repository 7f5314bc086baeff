import { Contract, NonceManager, Wallet, type ContractTransactionResponse } from "ethers";

import { verifyWebhook } from "@avn/protocol/webhook-signature";
import type { DemoStack } from "../common/stack-file.ts";
import { devAccount } from "./accounts.ts";
import { devnetProvider } from "./op-devnet.ts";
import { NETWORK_ACCOUNTS } from "./verification-network.ts";
import { WebhookReceiver, type ReceivedDelivery } from "./webhook-receiver.ts";

/** How long the demo waits for a delivery before it says what to look at. */
const DELIVERY_PATIENCE_MS = 60_000;

/**
 * `npm run demo:webhooks`: subscribes the demo's empty account's ERC-20 holding to a receiver of its own, moves
 * one unit in from the demo holder and back (two changes), and prints each delivery as it arrived with its
 * signature checked; then the subscription's delivery log, and deletes it. Both balances end where they began.
 */
export async function runWebhooksDemo(stack: DemoStack, print: (line: string) => void): Promise<void> {
  if (stack.l1 === undefined) throw new Error("The running stack has no L1 (the EVM source)");
  const erc20 = stack.demo.evm.find((entry) => entry.kind === "erc20")?.contract_address;
  if (erc20 === undefined) throw new Error("The stack file names no demo ERC-20");
  const holder = devAccount(NETWORK_ACCOUNTS.demoHolder);
  const empty = devAccount(NETWORK_ACCOUNTS.demoEmpty);
  const receiver = new WebhookReceiver();
  const url = await receiver.listen();
  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${stack.api.baseUrl}${path}`, {
      method,
      headers: { authorization: stack.api.apiKey, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const provider = devnetProvider(stack.l1.rpcUrl, stack.l1.chainId);
  let subscriptionId: string | undefined;
  try {
    const created = await api("POST", "/api/subscriptions", { chain: "ethereum", owner: empty.address, asset: erc20, url });
    if (created.status !== 201) throw new Error(`POST /api/subscriptions answered ${created.status}: ${await created.text()}`);
    const { id, secret } = (await created.json()) as { id: string; secret: string };
    subscriptionId = id;
    print(`Subscribed ${id}: the ERC-20 ${erc20} of ${empty.address}, delivered to ${url}`);

    const transfer = async (from: { privateKey: string }, to: string) => {
      const token = new Contract(
        erc20,
        ["function transfer(address,uint256) returns (bool)"],
        new NonceManager(new Wallet(from.privateKey, provider)),
      );
      const sent = (await token.getFunction("transfer")(to, 1n)) as ContractTransactionResponse;
      return (await sent.wait())!.blockNumber;
    };
    const show = (delivery: ReceivedDelivery, block: number) => {
      verifyWebhook(delivery.raw, delivery.signature, secret);
      print(`  Avn-Signature: ${delivery.signature}  (checked with the subscription's secret)`);
      print(`  ${delivery.raw}`);
      if (delivery.body.block !== BigInt(block))
        throw new Error(`the delivery names block ${String(delivery.body.block)}, the transfer was mined in ${block}`);
    };
    for (const [step, from, to] of [
      ["one unit in from the demo holder", holder, empty.address],
      ["it back to the demo holder", empty, holder.address],
    ] as const) {
      const before = receiver.deliveries.length;
      print(`Moving ${step}…`);
      const block = await transfer(from, to);
      await arrival(receiver, before + 1);
      show(receiver.deliveries[before], block);
    }
    const log = (await (await api("GET", `/api/subscriptions/${id}/deliveries`)).json()) as { deliveries: unknown[] };
    print(`GET /api/subscriptions/${id}/deliveries:`);
    for (const attempt of log.deliveries) print(`  ${JSON.stringify(attempt)}`);
  } finally {
    if (subscriptionId !== undefined) await api("DELETE", `/api/subscriptions/${subscriptionId}`).catch(() => undefined);
    provider.destroy();
    await receiver.close();
  }
}

/** Resolves once the receiver holds `count` deliveries; rejects, saying where to look, after DELIVERY_PATIENCE_MS. */
function arrival(receiver: WebhookReceiver, count: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no delivery within ${DELIVERY_PATIENCE_MS / 1000} s: see .devnet/network/logs/api.log`)),
      DELIVERY_PATIENCE_MS,
    );
  });
  return Promise.race([receiver.waitFor(() => receiver.deliveries.length >= count), late]).finally(() => clearTimeout(timer));
}
