/** OP-stack L2 predeploys the project uses, at their fixed addresses (OP `Predeploys.sol`). */
export const L2_PREDEPLOYS = {
  /**
   * What wallets and viem's OP actions (`estimateL1Fee`, `estimateTotalFee`) call for a transaction's L1
   * data fee. Its code needs no initialization: it reads L1Block, whose fee overhead and scalar the devnet
   * leaves at 0 (`src/devnet/op/l1-attributes.ts`), so it reports an L1 fee of 0, which is what the devnet's
   * L2 charges (anvil `--optimism` charges no L1 data fee, whatever fee parameters L1Block holds), and L1's base fee as
   * `l1BaseFee()`.
   */
  GasPriceOracle: "0x420000000000000000000000000000000000000F",
  L2CrossDomainMessenger: "0x4200000000000000000000000000000000000007",
  L2StandardBridge: "0x4200000000000000000000000000000000000010",
  OptimismMintableERC20Factory: "0x4200000000000000000000000000000000000012",
  L2ERC721Bridge: "0x4200000000000000000000000000000000000014",
  L1Block: "0x4200000000000000000000000000000000000015",
  L2ToL1MessagePasser: "0x4200000000000000000000000000000000000016",
} as const;

/**
 * The Ethereum Attestation Service, which the OP stack predeploys on every L2 at these addresses (OP
 * `Predeploys.sol`): explorers, wallets and other protocols read attestations there. The network exports its
 * answers to it through `AttestationExporter` (docs/eas.md).
 */
export const EAS_PREDEPLOYS = {
  SchemaRegistry: "0x4200000000000000000000000000000000000020",
  EAS: "0x4200000000000000000000000000000000000021",
} as const;
