import { formatEther, type Provider } from "ethers";
import type { Logger } from "pino";

/** Warns when the burner's L2 balance is below `minimum`: without gas money it can neither heart-beat nor vote. */
export async function warnIfBurnerIsPoor(provider: Provider, burner: string, minimum: bigint, logger: Logger): Promise<void> {
  const balance = await provider.getBalance(burner);
  if (balance < minimum) {
    logger.warn(
      { burner, balanceEth: formatEther(balance), minimumEth: formatEther(minimum) },
      "the burner's L2 balance is low: send it gas money",
    );
  }
}
