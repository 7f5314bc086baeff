// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import { INodeLicense } from "./INodeLicense.sol";

/// @title INodeRegistry
/// @notice Who runs which license. A license owner delegates licenses to an operator: the burner wallet
/// of a circuit node. A delegation is void as soon as the license changes hands (the new owner must
/// delegate again). Operators send heartbeats; a license is live while its operator's last heartbeat is
/// within the liveness window. Per-license statistics (submissions, agreeing, disagreeing) are written
/// by the recorder (the verification registry) and let anyone judge a node's quality of service.
interface INodeRegistry {
    /// @notice A delegation: the operator and the license's transfer count when it was made.
    struct Delegation {
        address operator;
        uint96 licenseTransferCount;
    }

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

    /// @notice Emitted on every heartbeat.
    event HeartbeatRecorded(address indexed operator, uint256 timestamp, uint256 capacity);

    /// @notice Emitted when governance changes the liveness window.
    event LivenessWindowUpdated(uint256 oldWindow, uint256 newWindow);

    /// @notice Thrown when an address that must be set is zero.
    error NodeRegistry_ZeroAddress();

    /// @notice Thrown when a license list is empty.
    error NodeRegistry_NoLicenses();

    /// @notice Thrown when `caller` does not own `licenseId`.
    error NodeRegistry_NotLicenseOwner(uint256 licenseId, address caller);

    /// @notice Thrown when `licenseId` has no delegation record to remove.
    error NodeRegistry_NotDelegated(uint256 licenseId);

    /// @notice Thrown when a page scan of zero licenses is asked for (it could never advance).
    error NodeRegistry_ZeroMaxScan();

    /// @notice Thrown when the liveness window is zero or above `MAX_LIVENESS_WINDOW`.
    error NodeRegistry_InvalidLivenessWindow(uint256 window);

    /// @notice The role of the contract that records accepted votes (the verification registry).
    function RECORDER_ROLE() external view returns (bytes32);

    /// @notice The longest liveness window governance may set.
    function MAX_LIVENESS_WINDOW() external view returns (uint256);

    /// @notice The license collection.
    function LICENSE() external view returns (INodeLicense);

    /// @notice Seconds after an operator's last heartbeat during which its licenses are live.
    function livenessWindow() external view returns (uint256);

    /// @notice The operator `licenseId` is delegated to; zero when not delegated or when the license
    /// changed hands since the delegation.
    function operatorOf(uint256 licenseId) external view returns (address);

    /// @notice The raw delegation record of `licenseId` (possibly void; see `operatorOf`).
    function delegationOf(uint256 licenseId) external view returns (Delegation memory);

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

    /// @notice The votes `licenseId` submitted that the recorder accepted. How finalized votes turned out
    /// (agreed or disagreed) is counted where they are settled: `IVerificationRegistry.voteStatsOf`.
    function submissionsOf(uint256 licenseId) external view returns (uint256);

    /// @notice Delegates the caller's `licenseIds` to `operator` (replacing earlier delegations).
    function delegate(uint256[] calldata licenseIds, address operator) external;

    /// @notice Removes the delegations of the caller's `licenseIds`.
    function undelegate(uint256[] calldata licenseIds) external;

    /// @notice Records a heartbeat for every license delegated to the caller, without a capacity figure.
    function heartbeat() external;

    /// @notice Records a heartbeat for every license delegated to the caller, with the node's capacity.
    function heartbeat(uint32 capacity) external;

    /// @notice Recorder only: if `operator` is the live operator of every one of `licenseIds`, counts one
    /// submission for each and returns true; otherwise changes nothing and returns false.
    function recordSubmissions(address operator, uint256[] calldata licenseIds) external returns (bool allLive);

    /// @notice Governance sets the liveness window.
    function setLivenessWindow(uint256 window) external;
}
