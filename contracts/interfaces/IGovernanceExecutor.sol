// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title IGovernanceExecutor
/// @notice The L2 end of governance: it runs batches of calls sent by the L1 timelock through the OP Stack's
/// cross-domain messengers, and nothing else. It holds the admin roles of the L2 protocol contracts, so a
/// parameter on L2 changes only when token holders voted for it on L1 and the timelock's delay has passed.
interface IGovernanceExecutor {
    /// @notice What became of a batch: nothing yet (it may run until its deadline), run, or cancelled.
    enum BatchState {
        None,
        Executed,
        Cancelled
    }

    /// @notice One call of a batch.
    struct Call {
        address target;
        uint256 value;
        bytes data;
    }

    /// @notice A batch ran in full: `batchHash` is keccak256(abi.encode(calls, deadline)), one
    /// `CallExecuted` per call came before it.
    event BatchExecuted(bytes32 indexed batchHash, uint256 callCount);

    /// @notice Call `index` of batch `batchHash` ran.
    event CallExecuted(bytes32 indexed batchHash, uint256 index, address indexed target, uint256 value, bytes data);

    /// @notice Governance cancelled batch `batchHash` (one whose relay failed, say): it can never run.
    event BatchCancelled(bytes32 indexed batchHash);

    /// @notice The caller is not the L2 cross-domain messenger.
    error GovernanceExecutor_NotMessenger(address caller);

    /// @notice The message was not sent by the L1 timelock.
    error GovernanceExecutor_NotL1Timelock(address l1Sender);

    /// @notice The batch's deadline has passed (a message that failed may be replayed by anyone, so a
    /// batch is good only until the deadline its proposal set).
    error GovernanceExecutor_Expired(uint256 deadline);

    /// @notice A batch holds no call.
    error GovernanceExecutor_EmptyBatch();

    /// @notice The value sent does not equal the sum of the calls' values.
    error GovernanceExecutor_ValueMismatch(uint256 sent, uint256 required);

    /// @notice Call `index` reverted (with its revert data), so the whole batch did.
    error GovernanceExecutor_CallFailed(uint256 index, bytes reason);

    /// @notice The zero address was given where an account is required.
    error GovernanceExecutor_ZeroAddress();

    /// @notice The batch ran already or was cancelled.
    error GovernanceExecutor_BatchClosed(bytes32 batchHash, BatchState state);

    /// @notice `cancelBatch` was called by anyone but the executor itself (from within a batch).
    error GovernanceExecutor_NotSelf(address caller);

    /// @notice The L2 cross-domain messenger, the only caller `execute` accepts.
    function MESSENGER() external view returns (address);

    /// @notice The L1 timelock, the only L1 sender `execute` accepts.
    function L1_TIMELOCK() external view returns (address);

    /// @notice What became of batch `batchHash` (keccak256(abi.encode(calls, deadline))).
    function batchState(bytes32 batchHash) external view returns (BatchState);

    /// @notice Runs `calls` in order, all or none, if `block.timestamp <= deadline` and the batch neither
    /// ran nor was cancelled. Only through the messenger, from the L1 timelock; the value sent must be the
    /// sum of the calls' values.
    function execute(Call[] calldata calls, uint256 deadline) external payable;

    /// @notice Governance cancels batch `batchHash` (a call of a later batch: only the executor itself may
    /// call it), so a failed relay of it can never be replayed.
    function cancelBatch(bytes32 batchHash) external;
}
