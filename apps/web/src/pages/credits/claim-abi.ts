import type { Abi } from "viem";

import { gameItemAbi, nodeLicenseAbi, primaryTokenAbi, stakedTokenAbi, voucherClaimsAbi } from "../../generated/abis";

/**
 * The claim contract's ABI with the custom errors of the contracts a claim reaches (the tokens it transfers
 * or stakes, the licenses it sends, the game that mints), so that a refusal from any of them is decoded
 * by name rather than shown as raw revert data.
 */
export const claimCallAbi = [
  ...voucherClaimsAbi,
  ...primaryTokenAbi.filter((item) => item.type === "error"),
  ...stakedTokenAbi.filter((item) => item.type === "error"),
  ...nodeLicenseAbi.filter((item) => item.type === "error"),
  ...gameItemAbi.filter((item) => item.type === "error"),
] as const satisfies Abi;
