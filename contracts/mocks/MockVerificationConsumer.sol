// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { IVerificationConsumer, IVerificationRegistry } from "@avn/contracts/interfaces/IVerificationRegistry.sol";

/// @notice A consumer contract for tests: opens jobs with its own collateral and records callbacks (and
/// the gas each callback received). It can be told to revert, to burn all the gas it gets, or to re-enter
/// the registry, to check that a bad callback never blocks finalization. Its collateral is staked for it by an account (`stakeCollateral(consumer, …)`).
contract MockVerificationConsumer is IVerificationConsumer {
    error MockVerificationConsumer_NotRegistry();
    error MockVerificationConsumer_Refused();

    enum Mode {
        Record,
        Revert,
        BurnGas,
        Reenter
    }

    IVerificationRegistry public immutable REGISTRY;
    Mode public mode;
    uint256 public callbackCount;
    uint256 public lastJobId;
    uint256 public lastBalance;
    uint64 public lastSourceBlock;
    uint256 public lastGasAtEntry;

    constructor(IVerificationRegistry registry) {
        REGISTRY = registry;
    }

    function setMode(Mode mode_) external {
        mode = mode_;
    }

    function enableCallbacks(uint256 gasLimit) external {
        REGISTRY.setCallbackGasLimit(gasLimit);
    }

    function requestEvm(address owner, address token) external returns (uint256) {
        return REGISTRY.requestEvmBalance(owner, token);
    }

    function onVerificationFulfilled(
        uint256 jobId,
        uint8,
        bytes32,
        bytes32,
        uint256 balance,
        uint64 sourceBlock
    ) external {
        uint256 gasAtEntry = gasleft();
        if (msg.sender != address(REGISTRY)) revert MockVerificationConsumer_NotRegistry();
        if (mode == Mode.Revert) revert MockVerificationConsumer_Refused();
        if (mode == Mode.BurnGas) {
            // Consumes every unit of gas the call was given.
            // solhint-disable-next-line no-inline-assembly
            assembly ("memory-safe") {
                invalid()
            }
        }
        if (mode == Mode.Reenter) REGISTRY.submitResults(new IVerificationRegistry.Submission[](0));
        ++callbackCount;
        lastJobId = jobId;
        lastBalance = balance;
        lastSourceBlock = sourceBlock;
        lastGasAtEntry = gasAtEntry;
    }
}
