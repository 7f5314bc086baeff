// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { Governor } from "@openzeppelin/contracts/governance/Governor.sol";
import { GovernorCountingSimple } from "@openzeppelin/contracts/governance/extensions/GovernorCountingSimple.sol";
import { GovernorProposalGuardian } from
    "@openzeppelin/contracts/governance/extensions/GovernorProposalGuardian.sol";
import { GovernorSequentialProposalId } from
    "@openzeppelin/contracts/governance/extensions/GovernorSequentialProposalId.sol";
import { GovernorSettings } from "@openzeppelin/contracts/governance/extensions/GovernorSettings.sol";
import { GovernorStorage } from "@openzeppelin/contracts/governance/extensions/GovernorStorage.sol";
import { GovernorTimelockControl } from "@openzeppelin/contracts/governance/extensions/GovernorTimelockControl.sol";
import { GovernorVotes } from "@openzeppelin/contracts/governance/extensions/GovernorVotes.sol";
import { GovernorVotesQuorumFraction } from
    "@openzeppelin/contracts/governance/extensions/GovernorVotesQuorumFraction.sol";
import { TimelockController } from "@openzeppelin/contracts/governance/TimelockController.sol";
import { IVotes } from "@openzeppelin/contracts/governance/utils/IVotes.sol";

/// @title ProtocolGovernor
/// @notice The L1 governor of the protocol: holders of the primary token (ERC20Votes, counted at the
/// proposal's snapshot block) propose and vote; a proposal that passes is queued in the timelock and runs
/// from there after its delay. Changes to the L2 contracts are proposals whose action is the timelock
/// calling the L1 cross-domain messenger, which carries them to the L2 `GovernanceExecutor`.
/// @dev OpenZeppelin's Governor, composed as its wizard composes it: settings (delay, period and threshold,
/// changeable only by governance itself), for/against/abstain counting, a quorum as a fraction of the
/// supply at the snapshot, and timelock control (the timelock, not this contract, holds what governance
/// owns). Three more OpenZeppelin extensions: proposal storage, so that tools and the web app list proposals
/// and queue or execute them by id without scanning logs; sequential proposal ids (1, 2, 3…, which people
/// can type); and a proposal guardian (a security council, set
/// at deployment and changeable only by governance) that can cancel any proposal before it executes: the
/// emergency brake against a malicious proposal that won its vote. The guardian cannot cancel a proposal
/// whose every action replaces the guardian: governance can always remove a guardian that turned against it
/// (a proposal that bundles the replacement with other actions stays cancellable, so the veto cannot be
/// dodged that way). Otherwise the overrides below only pick the behaviour of the extensions where two
/// parents define a function.
contract ProtocolGovernor is
    Governor,
    GovernorSettings,
    GovernorCountingSimple,
    GovernorStorage,
    GovernorSequentialProposalId,
    GovernorVotes,
    GovernorVotesQuorumFraction,
    GovernorTimelockControl,
    GovernorProposalGuardian
{
    /// @param token The primary token (its votes).
    /// @param timelock The timelock this governor proposes to and executes through.
    /// @param votingDelay_ Blocks between a proposal and the start of its vote (the snapshot).
    /// @param votingPeriod_ Blocks the vote lasts.
    /// @param proposalThreshold_ Votes (in token base units) needed to propose.
    /// @param quorumPercent Percent of the supply that must vote for or abstain for a proposal to pass.
    /// @param proposalGuardian_ Who may cancel any proposal before it executes (zero: none; each proposer
    /// may then cancel their own, as OpenZeppelin's extension provides).
    constructor(
        IVotes token,
        TimelockController timelock,
        uint48 votingDelay_,
        uint32 votingPeriod_,
        uint256 proposalThreshold_,
        uint256 quorumPercent,
        address proposalGuardian_
    )
        Governor("Verification Network Governor")
        GovernorSettings(votingDelay_, votingPeriod_, proposalThreshold_)
        GovernorVotes(token)
        GovernorVotesQuorumFraction(quorumPercent)
        GovernorTimelockControl(timelock)
    {
        if (proposalGuardian_ != address(0)) _setProposalGuardian(proposalGuardian_);
    }

    /// @notice Proposals that do nothing but replace the proposal guardian: the guardian cannot cancel them.
    mapping(uint256 proposalId => bool guardianReplacement) public replacesGuardianOnly;

    /*//////////////////////////////////////////////////////////////
                 OVERRIDES REQUIRED BY SOLIDITY (NO LOGIC)
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc Governor
    function proposalThreshold() public view override(Governor, GovernorSettings) returns (uint256) {
        return super.proposalThreshold();
    }

    /// @inheritdoc Governor
    function state(uint256 proposalId) public view override(Governor, GovernorTimelockControl) returns (ProposalState) {
        return super.state(proposalId);
    }

    /// @inheritdoc Governor
    function proposalNeedsQueuing(uint256 proposalId)
        public
        view
        override(Governor, GovernorTimelockControl)
        returns (bool)
    {
        return super.proposalNeedsQueuing(proposalId);
    }

    /// @inheritdoc Governor
    function getProposalId(
        address[] memory targets,
        uint256[] memory values,
        bytes[] memory calldatas,
        bytes32 descriptionHash
    ) public view override(Governor, GovernorSequentialProposalId) returns (uint256) {
        return super.getProposalId(targets, values, calldatas, descriptionHash);
    }

    function _propose(
        address[] memory targets,
        uint256[] memory values,
        bytes[] memory calldatas,
        string memory description,
        address proposer
    ) internal override(Governor, GovernorStorage, GovernorSequentialProposalId) returns (uint256 proposalId) {
        proposalId = super._propose(targets, values, calldatas, description, proposer);
        bool onlyGuardian = true;
        for (uint256 i = 0; i < targets.length && onlyGuardian; ++i) {
            onlyGuardian = targets[i] == address(this) && values[i] == 0 && calldatas[i].length >= 4
                && bytes4(calldatas[i]) == this.setProposalGuardian.selector;
        }
        if (onlyGuardian) replacesGuardianOnly[proposalId] = true;
    }

    function _queueOperations(
        uint256 proposalId,
        address[] memory targets,
        uint256[] memory values,
        bytes[] memory calldatas,
        bytes32 descriptionHash
    ) internal override(Governor, GovernorTimelockControl) returns (uint48) {
        return super._queueOperations(proposalId, targets, values, calldatas, descriptionHash);
    }

    function _executeOperations(
        uint256 proposalId,
        address[] memory targets,
        uint256[] memory values,
        bytes[] memory calldatas,
        bytes32 descriptionHash
    ) internal override(Governor, GovernorTimelockControl) {
        super._executeOperations(proposalId, targets, values, calldatas, descriptionHash);
    }

    function _cancel(
        address[] memory targets,
        uint256[] memory values,
        bytes[] memory calldatas,
        bytes32 descriptionHash
    ) internal override(Governor, GovernorTimelockControl) returns (uint256) {
        return super._cancel(targets, values, calldatas, descriptionHash);
    }

    function _validateCancel(
        uint256 proposalId,
        address caller
    ) internal view override(Governor, GovernorProposalGuardian) returns (bool) {
        // Its own replacement: the guardian has no more power over it than anyone (a proposer may still
        // cancel its own proposal while it is pending, as Governor allows).
        if (replacesGuardianOnly[proposalId] && caller == proposalGuardian()) {
            return Governor._validateCancel(proposalId, caller);
        }
        return super._validateCancel(proposalId, caller);
    }

    function _executor() internal view override(Governor, GovernorTimelockControl) returns (address) {
        return super._executor();
    }
}
