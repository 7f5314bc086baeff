/**
 * How many blocks below the L1's head the local stack's hub pins an attested Ethereum answer
 * (`ATTESTATION_EVM_CONFIRMATIONS`, 3 by default): the devnet's L1 does not reorganize on its own. The chaos and
 * soak clients judge attested answers by it (src/chaos/load.ts).
 */
export const STACK_ATTESTATION_EVM_CONFIRMATIONS = 1;
