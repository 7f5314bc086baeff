import type { HardhatEthers } from "@nomicfoundation/hardhat-ethers/types";
import type { NetworkHelpers } from "@nomicfoundation/hardhat-network-helpers/types";
import type { ContractTransactionResponse } from "ethers";

import { deployTokenPair } from "../deploy/contracts.ts";
import { signPermit } from "../tokens/permit.ts";
import { gasOf, type GasRow } from "./gas.ts";
import { DAY, E18 } from "@avn/protocol/units";

export type { GasRow } from "./gas.ts";

/**
 * Deploys the token contracts (module Tokens) and a plain OpenZeppelin ERC-20 on the connected network
 * and measures the gas of each user operation, in the order a user meets them. The plain ERC-20 transfer
 * is the baseline row, measured in the same run.
 */
export async function measureTokenGas(ethers: HardhatEthers, networkHelpers: NetworkHelpers): Promise<GasRow[]> {
  const [admin, holder, spender, forfeitRecipient] = await ethers.getSigners();
  const { primary, staked } = await deployTokenPair(ethers, {
    supplyRecipient: holder.address,
    admin: admin.address,
    forfeitRecipient: forfeitRecipient.address,
    adminTransferDelay: 0n,
  });
  const plain = await ethers.deployContract("PlainERC20", [holder.address, 1_000n * E18]);
  const asHolder = staked.connect(holder);
  await primary.connect(holder).approve(await staked.getAddress(), ethers.MaxUint256);

  const rows: GasRow[] = [];
  const measure = async (operation: string, tx: Promise<ContractTransactionResponse>) => rows.push({ operation, gasUsed: await gasOf(tx) });

  await measure("PlainERC20.transfer (baseline)", plain.connect(holder).transfer(spender.address, E18));
  await measure("PrimaryToken.transfer", primary.connect(holder).transfer(spender.address, E18));

  const deadline = BigInt(await networkHelpers.time.latest()) + 3600n;
  const { chainId } = await ethers.provider.getNetwork();
  const nonce = await primary.nonces(holder.address);
  const signature = await signPermit(holder, primary, chainId, {
    owner: holder.address,
    spender: spender.address,
    value: E18,
    nonce,
    deadline,
  });
  await measure(
    "PrimaryToken.permit",
    primary.connect(spender).permit(holder.address, spender.address, E18, deadline, signature.v, signature.r, signature.s),
  );
  await measure("PrimaryToken.transferFrom (after permit)", primary.connect(spender).transferFrom(holder.address, spender.address, E18));

  await measure("StakedToken.stake (first)", asHolder.stake(100n * E18));
  await measure("StakedToken.stake (again)", asHolder.stake(100n * E18));
  await measure("StakedToken.requestRedemption", asHolder.requestRedemption(50n * E18, 30n * DAY));
  await measure("StakedToken.cancelRedemption", asHolder.cancelRedemption(1n));
  await asHolder.requestRedemption(50n * E18, 30n * DAY);
  await networkHelpers.time.increase(30n * DAY);
  await measure("StakedToken.completeRedemption", asHolder.completeRedemption(2n));
  return rows;
}

/** Formats rows as a table with each operation's ratio to the first (baseline) row. */
export function formatGasTable(rows: GasRow[]): string {
  const baseline = rows[0].gasUsed;
  const width = Math.max(...rows.map((row) => row.operation.length));
  const lines = [`${"operation".padEnd(width)}  ${"gas".padStart(8)}  vs baseline`];
  for (const row of rows) {
    const ratio = Number((row.gasUsed * 1000n) / baseline) / 1000;
    lines.push(`${row.operation.padEnd(width)}  ${row.gasUsed.toString().padStart(8)}  ${ratio.toFixed(2)}x`);
  }
  return lines.join("\n");
}
