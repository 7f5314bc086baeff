import type { HardhatEthers } from "@nomicfoundation/hardhat-ethers/types";
import type { Address, Hex } from "viem";

import { creditsDomain, VOUCHER_TYPES, type Voucher } from "@avn/protocol/credits/typed-data";
import { gasOf, type GasRow } from "./gas.ts";
import { deployGasBenchProtocol } from "./verification-gas.ts";
import { E18 } from "@avn/protocol/units";
import { ItemKind } from "@avn/protocol/constants";

/** IVoucherClaims.ItemKind. */

/**
 * The gas of a claim on the credits channel's claim platform, one row per kind of item, each the
 * recipient's whole transaction (the recipient's first of that asset: its balance slot written fresh).
 */
export async function measureCreditsGas(ethers: HardhatEthers): Promise<GasRow[]> {
  const { primary, staked, license, attestationVerifier, admin, owner } = await deployGasBenchProtocol(ethers, 2n);
  const [issuer, buyer] = [ethers.Wallet.createRandom(), (await ethers.getSigners())[7]];
  const claims = await ethers.deployContract("VoucherClaims", [issuer.address, admin.address, admin.address, 0n]);
  const claimsAddress = await claims.getAddress();
  const game = await ethers.deployContract("GameItem", [
    await attestationVerifier.getAddress(),
    await primary.getAddress(),
    1n,
    3_600n,
    claimsAddress,
    // No condition claims and no proof claims: the bench measures the minter's path.
    ethers.ZeroHash,
    ethers.ZeroAddress,
    0n,
  ]);
  const items = [
    {
      id: 1n,
      kind: ItemKind.Transfer,
      asset: await primary.getAddress(),
      amount: 100n * E18,
      name: "VoucherClaims.claim: 100 primary tokens (Transfer)",
    },
    {
      id: 2n,
      kind: ItemKind.StakeFor,
      asset: await staked.getAddress(),
      amount: 100n * E18,
      name: "VoucherClaims.claim: 100 staked tokens (StakeFor)",
    },
    {
      id: 3n,
      kind: ItemKind.NftInventory,
      asset: await license.getAddress(),
      amount: 1n,
      name: "VoucherClaims.claim: 1 node license (NftInventory)",
    },
    { id: 4n, kind: ItemKind.Mint, asset: await game.getAddress(), amount: 1n, name: "VoucherClaims.claim: 1 game item (Mint)" },
  ];
  for (const item of items) await (await claims.setItem(item.id, { kind: item.kind, asset: item.asset })).wait();
  await (await primary.connect(admin).transfer(claimsAddress, 1_000n * E18)).wait();
  await (await license.connect(owner).buy(1n, ethers.MaxUint256)).wait();
  const licenseId = await license.tokenOfOwnerByIndex(owner.address, 0n);
  await (await license.connect(owner)["safeTransferFrom(address,address,uint256)"](owner.address, claimsAddress, licenseId)).wait();

  const domain = creditsDomain((await ethers.provider.getNetwork()).chainId, claimsAddress as Address);
  const expiry = BigInt((await ethers.provider.getBlock("latest"))!.timestamp) + 86_400n;
  const rows: GasRow[] = [];
  for (const item of items) {
    const voucher: Voucher = {
      recipient: buyer.address as Address,
      itemId: item.id,
      amount: item.amount,
      voucherId: ethers.zeroPadValue(ethers.toBeHex(item.id), 32) as Hex,
      expiry,
    };
    const signature = await issuer.signTypedData(domain, { Voucher: [...VOUCHER_TYPES.Voucher] }, voucher);
    rows.push({ operation: item.name, gasUsed: await gasOf(claims.connect(buyer).claim(voucher, signature)) });
  }
  return rows;
}
