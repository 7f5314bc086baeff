// SPDX-License-Identifier: MIT
// ^0.8.15: the reference storage proof verifier, compiled by solc 0.8.15 for Optimism Bedrock's libraries, imports it.
// solhint-disable-next-line compiler-version
pragma solidity ^0.8.15;

import { IL1Block } from "./IL1Block.sol";

/// @title IL1BlockHashes
/// @notice Keeps the hashes of the L1 blocks the L2 has seen. The `L1Block` predeploy only knows the latest
/// L1 block, which changes every L1 block (about 12 s); anyone may `record` it here, so that a proof against
/// an older L1 block can still be checked once the predeploy has moved on.
interface IL1BlockHashes {
    /// @notice An L1 block's hash and timestamp, as the `L1Block` predeploy reported them.
    /// @custom:field hash The block's hash (zero: not recorded).
    /// @custom:field timestamp The block's timestamp, in seconds.
    struct L1BlockRecord {
        bytes32 hash;
        uint64 timestamp;
    }

    /// @notice Emitted when an L1 block's hash is recorded.
    event L1BlockRecorded(uint64 indexed number, bytes32 hash, uint64 timestamp);

    /// @notice Thrown when a constructor argument is zero.
    error L1BlockHashes_ZeroAddress();

    /// @notice Thrown when `record` is called before the `L1Block` predeploy knows any L1 block (hash zero).
    error L1BlockHashes_NoL1Block();

    /// @notice The `L1Block` predeploy (or, in tests, a contract answering as it does) whose blocks are recorded.
    function L1_BLOCK() external view returns (IL1Block);

    /// @notice Records the L1 block the `L1Block` predeploy currently reports. Anyone may call it; recording
    /// a block already recorded changes nothing and emits nothing.
    /// @return number The block's number.
    /// @return hash The block's hash.
    function record() external returns (uint64 number, bytes32 hash);

    /// @notice The recorded hash and timestamp of L1 block `number` (zero hash: not recorded).
    function hashOf(uint64 number) external view returns (bytes32 hash, uint64 timestamp);

    /// @notice The highest L1 block recorded (all zero: none yet). A proof at a recorded block stays
    /// verifiable after `L1Block` moves on, so the API answers with this one when it is recent.
    function latest() external view returns (uint64 number, bytes32 hash, uint64 timestamp);

    /// @notice The L1 block the `L1Block` predeploy reports now, recorded or not: the one a proof can be
    /// checked against without a `record` call.
    function current() external view returns (uint64 number, bytes32 hash, uint64 timestamp);
}
