// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import { IVerificationRegistry } from "./IVerificationRegistry.sol";

/// @title IQosReports
/// @notice Where each circuit node publishes what it measured of the service in the current epoch: the API
/// it probed, its own sources, and its peers as it saw them sign in the hub's rounds. A report is an event, nothing is stored: the API's `GET /api/network/status`
/// takes each operator's latest report of the epoch and publishes the medians, and anyone can recompute them
/// from the logs. Only the operator of a live license may report, once per license it names, so a report
/// costs a paid license to forge (docs/verification.md, "What the nodes measure").
interface IQosReports {
    /// @notice What one node measured, from the start of the epoch to the report.
    /// @custom:field epoch The registry's current epoch (a report of another epoch is refused).
    /// @custom:field apiProbes Plain queries the node sent to the API.
    /// @custom:field apiCorrect Of those, answers equal to the node's own read of the source.
    /// @custom:field apiErrors Of those, answers that were not a balance (an error status, a timeout).
    /// @custom:field apiLatencyP50Ms The median latency of the API's answers, milliseconds.
    /// @custom:field apiLatencyP95Ms Their 95th percentile.
    /// @custom:field evmSourceLatencyP50Ms The median latency of the node's own EVM source (`eth_blockNumber`).
    /// @custom:field svmSourceLatencyP50Ms The median latency of its Solana source (`getSlot`).
    /// @custom:field evmHeadLagSeconds The median age of the EVM source's latest block when read.
    /// @custom:field peerRounds The hub's rounds the node counted: those whose winning struct it signed itself.
    /// @custom:field peers What it saw of each peer license in those rounds, strictly ascending by license id, at
    /// most `MAX_PEER_OBSERVATIONS`.
    struct Report {
        uint64 epoch;
        uint32 apiProbes;
        uint32 apiCorrect;
        uint32 apiErrors;
        uint32 apiLatencyP50Ms;
        uint32 apiLatencyP95Ms;
        uint32 evmSourceLatencyP50Ms;
        uint32 svmSourceLatencyP50Ms;
        uint32 evmHeadLagSeconds;
        uint32 peerRounds;
        PeerObservation[] peers;
    }

    /// @notice What a node saw of one peer license in the hub's rounds it counted this epoch. Every signature
    /// behind these counts was recovered by the node over the struct it signed itself, and the signer operated
    /// the license; the times are the hub's (docs/verification.md, "Its peers, through the hub's rounds").
    /// @custom:field licenseId The peer license.
    /// @custom:field roundsObserved Rounds the node counted since the license's first verified signature this epoch.
    /// @custom:field roundsSigned Of those, rounds with the license's verified signature of the node's struct.
    /// @custom:field medianSigningMs The median of the hub's times from request to those signatures, milliseconds.
    struct PeerObservation {
        uint256 licenseId;
        uint32 roundsObserved;
        uint32 roundsSigned;
        uint32 medianSigningMs;
    }

    /// @notice Emitted for each accepted report, by the operator of live license `licenseId`.
    event QosReported(address indexed operator, uint256 indexed licenseId, uint256 indexed epoch, Report report);

    /// @notice Thrown when a constructor argument is zero.
    error QosReports_ZeroAddress();

    /// @notice Thrown when the caller is not the operator of `licenseId`, or the license is not live.
    error QosReports_NotLiveOperator(address caller, uint256 licenseId);

    /// @notice Thrown when a report names an epoch other than the current one.
    error QosReports_WrongEpoch(uint256 epoch, uint256 currentEpoch);

    /// @notice Thrown when a report counts more correct or failed answers than probes.
    error QosReports_InconsistentCounts(uint256 probes, uint256 correct, uint256 errors);

    /// @notice Thrown when a report lists more peers than `MAX_PEER_OBSERVATIONS`.
    error QosReports_TooManyPeers(uint256 count, uint256 max);

    /// @notice Thrown when the peer at `index` does not have a larger license id than the one before it.
    error QosReports_PeersNotAscending(uint256 index);

    /// @notice Thrown when a peer was signed in more rounds than observed, or observed in more than were counted.
    error QosReports_InconsistentPeerCounts(uint256 licenseId, uint256 observed, uint256 signed);

    /// @notice The most peer licenses one report may list (a bound on its gas: docs/verification.md).
    function MAX_PEER_OBSERVATIONS() external view returns (uint256);

    /// @notice The verification registry whose epochs and node registry reports follow.
    function REGISTRY() external view returns (IVerificationRegistry);

    /// @notice Publishes `report` as the operator of live license `licenseId` (the caller).
    function report(uint256 licenseId, Report calldata report_) external;
}
