// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { IGovernanceExecutor } from "../interfaces/IGovernanceExecutor.sol";

/// @dev The one function of the OP Stack's L2CrossDomainMessenger this contract reads.
interface ICrossDomainMessenger {
    function xDomainMessageSender() external view returns (address);
}

/// @title GovernanceExecutor
/// @notice See {IGovernanceExecutor}.
/// @dev No owner, no upgrade, no other entry point: what it may do is what the L1 timelock tells it. The
/// messenger is an immutable rather than the predeploy constant so that tests can stand one up elsewhere;
/// deployments pass the predeploy (0x4200…0007). A batch whose call reverts reverts whole; the messenger
/// then records the message as failed, and anyone may replay it later (the OP Stack's rule for every
/// message). So that such a replay is never a surprise, each batch carries a deadline after which it can
/// never run, runs at most once, and can be cancelled by governance (a later batch calling `cancelBatch`).
contract GovernanceExecutor is IGovernanceExecutor {
    /// @inheritdoc IGovernanceExecutor
    address public immutable MESSENGER;

    /// @inheritdoc IGovernanceExecutor
    address public immutable L1_TIMELOCK;

    /// @inheritdoc IGovernanceExecutor
    mapping(bytes32 batchHash => BatchState state) public batchState;

    /// @param messenger The L2 cross-domain messenger.
    /// @param l1Timelock The L1 timelock whose messages this contract runs.
    constructor(address messenger, address l1Timelock) {
        if (messenger == address(0) || l1Timelock == address(0)) revert GovernanceExecutor_ZeroAddress();
        MESSENGER = messenger;
        L1_TIMELOCK = l1Timelock;
    }

    /// @inheritdoc IGovernanceExecutor
    function execute(Call[] calldata calls, uint256 deadline) external payable {
        if (msg.sender != MESSENGER) revert GovernanceExecutor_NotMessenger(msg.sender);
        address l1Sender = ICrossDomainMessenger(MESSENGER).xDomainMessageSender();
        if (l1Sender != L1_TIMELOCK) revert GovernanceExecutor_NotL1Timelock(l1Sender);
        if (block.timestamp > deadline) revert GovernanceExecutor_Expired(deadline);
        if (calls.length == 0) revert GovernanceExecutor_EmptyBatch();
        bytes32 batchHash = keccak256(abi.encode(calls, deadline));
        BatchState state = batchState[batchHash];
        if (state != BatchState.None) revert GovernanceExecutor_BatchClosed(batchHash, state);
        // Marked before the calls run (a batch that reverts leaves no mark): a batch runs once.
        batchState[batchHash] = BatchState.Executed;

        uint256 required;
        for (uint256 i = 0; i < calls.length; ++i) {
            required += calls[i].value;
        }
        if (required != msg.value) revert GovernanceExecutor_ValueMismatch(msg.value, required);

        for (uint256 i = 0; i < calls.length; ++i) {
            Call calldata call = calls[i];
            // Targets are what the L1 vote approved; reentrancy into `execute` is impossible (only the
            // messenger may call it, and the messenger refuses a relay while one is in progress).
            // solhint-disable-next-line avoid-low-level-calls
            (bool success, bytes memory reason) = call.target.call{ value: call.value }(call.data);
            if (!success) revert GovernanceExecutor_CallFailed(i, reason);
            emit CallExecuted(batchHash, i, call.target, call.value, call.data);
        }
        emit BatchExecuted(batchHash, calls.length);
    }

    /// @inheritdoc IGovernanceExecutor
    function cancelBatch(bytes32 batchHash) external {
        // Only from within a batch: what governance decided, through the messenger and the timelock.
        if (msg.sender != address(this)) revert GovernanceExecutor_NotSelf(msg.sender);
        BatchState state = batchState[batchHash];
        if (state != BatchState.None) revert GovernanceExecutor_BatchClosed(batchHash, state);
        batchState[batchHash] = BatchState.Cancelled;
        emit BatchCancelled(batchHash);
    }
}
