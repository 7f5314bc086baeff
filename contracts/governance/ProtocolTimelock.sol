// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { TimelockController } from "@openzeppelin/contracts/governance/TimelockController.sol";

/// @title ProtocolTimelock
/// @notice OpenZeppelin's TimelockController, unchanged, under a name of this project (so that it is
/// compiled here and deployed by the Ignition modules). The governor is its only proposer and canceller;
/// anyone may execute a ready operation; it administers itself (no other admin is kept after deployment).
contract ProtocolTimelock is TimelockController {
    /// @param minDelay Seconds between queueing and executing an operation.
    /// @param proposers Accounts that may schedule and cancel (the governor).
    /// @param executors Accounts that may execute ready operations (the zero address: anyone).
    /// @param admin An optional admin for the deployment's wiring, renounced at its end (zero: none).
    constructor(
        uint256 minDelay,
        address[] memory proposers,
        address[] memory executors,
        address admin
    ) TimelockController(minDelay, proposers, executors, admin) { }
}
