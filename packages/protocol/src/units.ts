/** One whole token of an 18-decimal ERC-20 (the primary and staked tokens), in base units. */
export const E18 = 10n ** 18n;

/** Seconds in a day, as the contracts count time (unlock periods, epochs, timelocks). */
export const DAY = 24n * 60n * 60n;
