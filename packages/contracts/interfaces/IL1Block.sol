// SPDX-License-Identifier: MIT
// ^0.8.15: the reference storage proof verifier, compiled by solc 0.8.15 for Optimism Bedrock's libraries, imports it.
// solhint-disable-next-line compiler-version
pragma solidity ^0.8.15;

/// @title IL1Block
/// @notice The part of the OP-stack `L1Block` predeploy (0x4200000000000000000000000000000000000015) that the
/// storage proof verifier reads: the latest L1 block the L2 knows of, set by the depositor account at the
/// start of each L2 epoch.
interface IL1Block {
    /// @notice The latest L1 block number known by the L2.
    function number() external view returns (uint64);

    /// @notice The latest L1 block's timestamp.
    function timestamp() external view returns (uint64);

    /// @notice The latest L1 block's hash.
    function hash() external view returns (bytes32);
}
