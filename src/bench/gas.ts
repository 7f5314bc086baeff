import type { TransactionResponse } from "ethers";

/** One measured operation: the gas of its whole transaction (21,000 base cost included). */
export interface GasRow {
  operation: string;
  gasUsed: bigint;
}

/** The gas a transaction used, once mined. */
export async function gasOf(tx: Promise<TransactionResponse>): Promise<bigint> {
  const receipt = await (await tx).wait();
  if (receipt === null) throw new Error("transaction was not mined");
  return receipt.gasUsed;
}
