// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { INodeRegistry } from "@avn/contracts/interfaces/INodeRegistry.sol";
import { IQosReports } from "@avn/contracts/interfaces/IQosReports.sol";
import { IVerificationRegistry } from "@avn/contracts/interfaces/IVerificationRegistry.sol";

/// @title QosReports
/// @notice See {IQosReports}.
/// @dev No admin and no storage: a report is checked (the caller operates the named live license, the epoch
/// is the current one, the counts add up) and emitted. What the reports say moves no token: pay follows
/// only what the registries record (docs/verification.md, trust model).
contract QosReports is IQosReports {
    /// @inheritdoc IQosReports
    IVerificationRegistry public immutable REGISTRY;

    INodeRegistry private immutable NODE_REGISTRY;

    /// @inheritdoc IQosReports
    uint256 public constant MAX_PEER_OBSERVATIONS = 128;

    /// @param registry The verification registry (its epochs, and its node registry's licenses).
    constructor(IVerificationRegistry registry) {
        if (address(registry) == address(0)) revert QosReports_ZeroAddress();
        REGISTRY = registry;
        NODE_REGISTRY = registry.NODE_REGISTRY();
    }

    /// @inheritdoc IQosReports
    function report(uint256 licenseId, Report calldata report_) external {
        if (NODE_REGISTRY.operatorOf(licenseId) != msg.sender || !NODE_REGISTRY.isLive(licenseId)) {
            revert QosReports_NotLiveOperator(msg.sender, licenseId);
        }
        uint256 currentEpoch = REGISTRY.currentEpoch();
        if (report_.epoch != currentEpoch) revert QosReports_WrongEpoch(report_.epoch, currentEpoch);
        if (uint256(report_.apiCorrect) + report_.apiErrors > report_.apiProbes) {
            revert QosReports_InconsistentCounts(report_.apiProbes, report_.apiCorrect, report_.apiErrors);
        }
        _checkPeers(report_);
        emit QosReported(msg.sender, licenseId, currentEpoch, report_);
    }

    /// @dev Bounded, sorted (so a license appears once) and counts that nest. Not checked: that a peer is not
    /// the reporter's own license (a call per peer; the API drops such entries from the delegation events),
    /// nor that the figures are true, which nothing on-chain can know.
    function _checkPeers(Report calldata report_) private pure {
        PeerObservation[] calldata peers = report_.peers;
        if (peers.length > MAX_PEER_OBSERVATIONS) revert QosReports_TooManyPeers(peers.length, MAX_PEER_OBSERVATIONS);
        uint256 previous;
        for (uint256 i; i < peers.length; ++i) {
            PeerObservation calldata peer = peers[i];
            if (i != 0 && peer.licenseId <= previous) revert QosReports_PeersNotAscending(i);
            previous = peer.licenseId;
            if (peer.roundsSigned > peer.roundsObserved || peer.roundsObserved > report_.peerRounds) {
                revert QosReports_InconsistentPeerCounts(peer.licenseId, peer.roundsObserved, peer.roundsSigned);
            }
        }
    }
}
