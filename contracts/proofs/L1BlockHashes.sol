// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { IL1Block } from "@avn/contracts/interfaces/IL1Block.sol";
import { IL1BlockHashes } from "@avn/contracts/interfaces/IL1BlockHashes.sol";

/// @title L1BlockHashes
/// @notice See {IL1BlockHashes}.
/// @dev No admin and nothing to configure: every record is copied from the `L1Block` predeploy, which only the
/// protocol's depositor account writes, so whoever calls `record` cannot choose what is stored.
contract L1BlockHashes is IL1BlockHashes {
    /*//////////////////////////////////////////////////////////////
                               IMMUTABLES
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IL1BlockHashes
    IL1Block public immutable L1_BLOCK;

    /*//////////////////////////////////////////////////////////////
                                STORAGE
    //////////////////////////////////////////////////////////////*/

    /// @dev The recorded L1 blocks, by number.
    mapping(uint64 number => L1BlockRecord record) private _records;

    /// @dev The highest block number recorded (0: none yet).
    uint64 private _latest;

    /*//////////////////////////////////////////////////////////////
                              CONSTRUCTOR
    //////////////////////////////////////////////////////////////*/

    /// @param l1Block The `L1Block` predeploy (0x4200000000000000000000000000000000000015 on an OP chain).
    constructor(IL1Block l1Block) {
        if (address(l1Block) == address(0)) revert L1BlockHashes_ZeroAddress();
        L1_BLOCK = l1Block;
    }

    /*//////////////////////////////////////////////////////////////
                               EXTERNAL
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IL1BlockHashes
    function record() external returns (uint64 number, bytes32 hash) {
        uint64 timestamp;
        (number, hash, timestamp) = current();
        // Before the first L1 block reaches the L2 the predeploy reads zero, which `hashOf` means "not recorded".
        if (hash == bytes32(0)) revert L1BlockHashes_NoL1Block();
        L1BlockRecord storage stored = _records[number];
        // An L1 block's hash is fixed once the L2 derives from it: recording it again would only repeat the event.
        if (stored.hash == hash) return (number, hash);
        stored.hash = hash;
        stored.timestamp = timestamp;
        if (number > _latest) _latest = number;
        emit L1BlockRecorded(number, hash, timestamp);
    }

    /// @inheritdoc IL1BlockHashes
    function hashOf(uint64 number) external view returns (bytes32 hash, uint64 timestamp) {
        L1BlockRecord storage stored = _records[number];
        return (stored.hash, stored.timestamp);
    }

    /// @inheritdoc IL1BlockHashes
    function latest() external view returns (uint64 number, bytes32 hash, uint64 timestamp) {
        number = _latest;
        L1BlockRecord storage stored = _records[number];
        return (number, stored.hash, stored.timestamp);
    }

    /*//////////////////////////////////////////////////////////////
                                PUBLIC
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IL1BlockHashes
    function current() public view returns (uint64 number, bytes32 hash, uint64 timestamp) {
        return (L1_BLOCK.number(), L1_BLOCK.hash(), L1_BLOCK.timestamp());
    }
}
