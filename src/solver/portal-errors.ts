/**
 * Whether a finalization was refused only because the finalization period is not over at the portal's clock. The SDK
 * calls a withdrawal ready by the latest L1 block's time; the portal checks the block that would include the
 * transaction, which can still be inside the period: the next L1 block finalizes it.
 */
export function finalizationNotElapsed(error: unknown): boolean {
  return /finalization period has not elapsed/.test(String(error));
}
