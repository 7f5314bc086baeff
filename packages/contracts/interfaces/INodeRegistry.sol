// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import { INodeLicense } from "./INodeLicense.sol";

/// @title INodeRegistry
/// @notice Who runs which license. A license owner delegates licenses to an operator: the burner wallet
/// of a circuit node. A delegation ends as soon as the license changes hands (the license contract tells
/// the registry, which deletes it; the new owner must delegate again). Operators send heartbeats; a license is live while its operator's last heartbeat is
/// within the liveness window. The quorum, the number of distinct live licenses an answer needs (a job's
/// votes or an attestation's signatures), is kept here beside the liveness window: both say who counts
/// as the network. Per-license statistics (submissions, agreeing, disagreeing) are written
/// by the recorder (the verification registry) and let anyone judge a node's quality of service.
interface INodeRegistry {
    /// @notice An operator's last heartbeat and the capacity figure it reported (jobs per minute from the
    /// node's start-up benchmark; 0 = not reported).
    struct Heartbeat {
        uint64 timestamp;
        uint32 capacity;
    }

    /// @notice Emitted when `owner` delegates `licenseId` to `operator`.
    event Delegated(uint256 indexed licenseId, address indexed owner, address indexed operator);

    /// @notice Emitted when `owner` removes the delegation of `licenseId` (to `operator`).
    event Undelegated(uint256 indexed licenseId, address indexed owner, address indexed operator);

    /// @notice Emitted when `licenseId` changed hands while delegated to `operator`: the delegation ends.
    event DelegationVoided(uint256 indexed licenseId, address indexed operator);

    /// @notice Emitted on every heartbeat.
    event HeartbeatRecorded(address indexed operator, uint256 timestamp, uint256 capacity);

    /// @notice Emitted when governance changes the liveness window.
    event LivenessWindowUpdated(uint256 oldWindow, uint256 newWindow);

    /// @notice Emitted when governance changes the quorum (new jobs and attestations checked from then on).
    event QuorumUpdated(uint256 oldQuorum, uint256 newQuorum);

    /// @notice Thrown when an address that must be set is zero.
    error NodeRegistry_ZeroAddress();

    /// @notice Thrown when a license list is empty.
    error NodeRegistry_NoLicenses();

    /// @notice Thrown when `caller` does not own `licenseId`.
    error NodeRegistry_NotLicenseOwner(uint256 licenseId, address caller);

    /// @notice Thrown when `licenseId` has no delegation record to remove.
    error NodeRegistry_NotDelegated(uint256 licenseId);

    /// @notice Thrown when the license contract does not name this registry as the one it tells of transfers
    /// (a delegation it would not void on transfer is refused).
    error NodeRegistry_NotLicenseRegistry();

    /// @notice Thrown when anyone but the license contract reports a change of hands.
    error NodeRegistry_NotLicense(address caller);

    /// @notice Thrown when a page scan of zero licenses is asked for (it could never advance).
    error NodeRegistry_ZeroMaxScan();

    /// @notice Thrown when the liveness window is zero or above `MAX_LIVENESS_WINDOW`.
    error NodeRegistry_InvalidLivenessWindow(uint256 window);

    /// @notice Thrown when two arrays that go in pairs differ in length.
    error NodeRegistry_LengthMismatch();

    /// @notice Thrown when a quorum is zero or above `MAX_QUORUM`.
    error NodeRegistry_InvalidQuorum(uint256 quorum);

    /// @notice The role of the contract that records accepted votes (the verification registry).
    function RECORDER_ROLE() external view returns (bytes32);

    /// @notice The longest liveness window governance may set.
    function MAX_LIVENESS_WINDOW() external view returns (uint256);

    /// @notice The largest quorum governance may set (half a job's vote limit, so that junk votes cannot
    /// fill a job before honest ones reach the quorum unless they come from more licenses than it).
    function MAX_QUORUM() external view returns (uint256);

    /// @notice The license collection.
    function LICENSE() external view returns (INodeLicense);

    /// @notice Seconds after an operator's last heartbeat during which its licenses are live.
    function livenessWindow() external view returns (uint256);

    /// @notice The number of distinct live licenses that must agree: on a job's answer (fixed when the job
    /// is requested) and on an attestation (checked when it is verified).
    function quorum() external view returns (uint256);

    /// @notice The operator `licenseId` is delegated to; zero when not delegated (a change of hands ends a
    /// delegation).
    function operatorOf(uint256 licenseId) external view returns (address);

    /// @notice A page of the licenses delegated to `operator`: scans license ids `fromId` up to
    /// `fromId + maxScan - 1` (within the minted range) and returns those whose `operatorOf` is `operator`,
    /// with the id to start the next page from (0 when the scan reached the last minted license).
    function delegatedLicenses(
        address operator,
        uint256 fromId,
        uint256 maxScan
    ) external view returns (uint256[] memory licenseIds, uint256 nextFromId);

    /// @notice The last heartbeat of `operator`.
    function heartbeatOf(address operator) external view returns (Heartbeat memory);

    /// @notice Whether `licenseId` is delegated and its operator's last heartbeat is within the window.
    function isLive(uint256 licenseId) external view returns (bool);

    /// @notice Whether `operator` is live and the operator of every one of `licenseIds` (one call for a
    /// signer's licenses: what an attestation signature needs).
    function isLiveOperatorOf(address operator, uint256[] calldata licenseIds) external view returns (bool);

    /// @notice What an attestation check needs, in one call: whether every delegation named is in force and
    /// its operator live, and the current quorum. Each entry is `licenseId << 160 | operator`.
    function checkDelegations(uint256[] calldata delegations) external view returns (bool allLive, uint256 currentQuorum);

    /// @notice The votes `licenseId` submitted that the recorder accepted. How finalized votes turned out
    /// (agreed or disagreed) is counted where they are settled: `IVerificationRegistry.voteStatsOf`.
    function submissionsOf(uint256 licenseId) external view returns (uint256);

    /// @notice Delegates the caller's `licenseIds` to `operator` (replacing earlier delegations).
    function delegate(uint256[] calldata licenseIds, address operator) external;

    /// @notice Removes the delegations of the caller's `licenseIds`.
    function undelegate(uint256[] calldata licenseIds) external;

    /// @notice License contract only: `licenseId` changed hands, so its delegation (if any) ends.
    function voidDelegation(uint256 licenseId) external;

    /// @notice Records a heartbeat for every license delegated to the caller, without a capacity figure.
    function heartbeat() external;

    /// @notice Records a heartbeat for every license delegated to the caller, with the node's capacity.
    function heartbeat(uint32 capacity) external;

    /// @notice Recorder only: if `operator` is the live operator of every one of `licenseIds`, counts one
    /// submission for each and returns true; otherwise changes nothing and returns false.
    function recordSubmissions(address operator, uint256[] calldata licenseIds) external returns (bool allLive);

    /// @notice Governance sets the liveness window.
    function setLivenessWindow(uint256 window) external;

    /// @notice Governance sets the quorum.
    function setQuorum(uint256 quorum) external;
}
