/**
 * Which agreeing signatures to settle on. The verifier accepts a set of signatures only when the
 * licenses they name reach the quorum and number at most `maxLicenses` in all (`MAX_LICENSES`, 16):
 * a set over the limit reverts with `TooManyLicenses`, whatever its quorum. So the hub does not take
 * every agreeing signature: it takes the set that reaches the quorum with the fewest licenses (each
 * named license costs a recording one fee write), then the fewest signatures (one `ecrecover` each),
 * then the earliest answers.
 *
 * `licenseCounts[i]` is how many licenses signature `i` names, in the order the signatures arrived.
 * Returns the chosen indexes in arrival order, or undefined when no set fits. The search is a
 * knapsack over sums up to `maxLicenses`: linear in the signatures, whatever their number.
 */
export function chooseQuorumSet(licenseCounts: readonly number[], quorum: number, maxLicenses: number): number[] | undefined {
  // best[sum]: the shortest arrival-ordered choice naming exactly `sum` licenses, found so far.
  const best: Array<number[] | undefined> = new Array<number[] | undefined>(maxLicenses + 1).fill(undefined);
  best[0] = [];
  for (const [index, count] of licenseCounts.entries()) {
    if (count <= 0 || count > maxLicenses) continue;
    // Downwards, so that this signature is used at most once in each choice.
    for (let sum = maxLicenses - count; sum >= 0; sum -= 1) {
      const base = best[sum];
      if (base === undefined) continue;
      const current = best[sum + count];
      // Strictly shorter only: among equally short choices the one of earlier answers stays.
      if (current === undefined || base.length + 1 < current.length) best[sum + count] = [...base, index];
    }
  }
  for (let sum = Math.max(quorum, 1); sum <= maxLicenses; sum += 1) if (best[sum] !== undefined) return best[sum];
  return undefined;
}
