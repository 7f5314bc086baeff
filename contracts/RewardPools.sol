// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { AccessControlDefaultAdminRules } from
    "@openzeppelin/contracts/access/extensions/AccessControlDefaultAdminRules.sol";
import { IERC20 } from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import { SafeERC20 } from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import { SafeCast } from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import { MerkleProof } from "@openzeppelin/contracts/utils/cryptography/MerkleProof.sol";
import { BitMaps } from "@openzeppelin/contracts/utils/structs/BitMaps.sol";
import { ReentrancyGuardTransient } from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";

import { INodeLicense } from "@avn/contracts/interfaces/INodeLicense.sol";
import { INodeRegistry } from "@avn/contracts/interfaces/INodeRegistry.sol";
import { IRewardPools } from "@avn/contracts/interfaces/IRewardPools.sol";
import { IStakedToken } from "@avn/contracts/interfaces/IStakedToken.sol";
import { IVerificationRegistry } from "@avn/contracts/interfaces/IVerificationRegistry.sol";

/// @title RewardPools
/// @notice See {IRewardPools}.
/// @dev Per epoch: one slot for the pool and its claims, one for the accepted root, one for the round and the
/// acceptance time; per round, a tally per root voted and a bitmap of the licenses that voted (256 licenses a
/// slot); a bitmap of claimed payouts. Nothing is read or written per license except by that license's own
/// vote or claim.
contract RewardPools is AccessControlDefaultAdminRules, ReentrancyGuardTransient, IRewardPools {
    using BitMaps for BitMaps.BitMap;
    using SafeERC20 for IERC20;

    struct Pool {
        uint128 funded;
        uint128 claimed;
    }

    struct Settlement {
        bytes32 root;
        uint64 acceptedAt; // 0 while no root is accepted in this round
        uint32 round;
    }

    /// @inheritdoc IRewardPools
    bytes32 public constant REWARDS_FUNDER_ROLE = keccak256("REWARDS_FUNDER_ROLE");

    /// @inheritdoc IRewardPools
    uint256 public constant MAX_PERIOD = 30 days;

    /// @inheritdoc IRewardPools
    IVerificationRegistry public immutable REGISTRY;

    /// @inheritdoc IRewardPools
    INodeRegistry public immutable NODE_REGISTRY;

    /// @inheritdoc IRewardPools
    IERC20 public immutable PRIMARY_TOKEN;

    /// @inheritdoc IRewardPools
    IStakedToken public immutable STAKED_TOKEN;

    /// @inheritdoc IRewardPools
    uint256 public immutable SETTLEMENT_DELAY;

    /// @inheritdoc IRewardPools
    uint256 public immutable DISPUTE_PERIOD;

    INodeLicense private immutable _LICENSE;
    uint256 private immutable _EPOCHS_START;
    uint256 private immutable _EPOCH_DURATION;

    mapping(uint256 epoch => Pool pool) private _pools;
    mapping(uint256 epoch => Settlement settlement) private _settlements;
    mapping(uint256 epoch => mapping(uint256 round => mapping(bytes32 root => uint256 votes))) private _rootVotes;
    mapping(uint256 epoch => mapping(uint256 round => BitMaps.BitMap licenses)) private _voted;
    mapping(uint256 epoch => BitMaps.BitMap licenses) private _claimed;

    /// @param registry The verification registry: its epochs, its node registry, its tokens.
    /// @param settlementDelay Seconds after an epoch's end before its root can be voted.
    /// @param disputePeriod Seconds after a root's acceptance during which governance can reject it.
    /// @param admin The governance account.
    /// @param adminTransferDelay The delay of the two-step admin transfer, in seconds.
    constructor(
        IVerificationRegistry registry,
        uint256 settlementDelay,
        uint256 disputePeriod,
        address admin,
        uint48 adminTransferDelay
    ) AccessControlDefaultAdminRules(adminTransferDelay, admin) {
        if (address(registry) == address(0)) revert RewardPools_ZeroAddress();
        if (settlementDelay > MAX_PERIOD) revert RewardPools_InvalidPeriod(settlementDelay);
        if (disputePeriod > MAX_PERIOD) revert RewardPools_InvalidPeriod(disputePeriod);
        REGISTRY = registry;
        NODE_REGISTRY = registry.NODE_REGISTRY();
        PRIMARY_TOKEN = registry.PRIMARY_TOKEN();
        STAKED_TOKEN = registry.STAKED_TOKEN();
        _LICENSE = NODE_REGISTRY.LICENSE();
        _EPOCHS_START = registry.EPOCHS_START();
        _EPOCH_DURATION = registry.EPOCH_DURATION();
        SETTLEMENT_DELAY = settlementDelay;
        DISPUTE_PERIOD = disputePeriod;
    }

    /*//////////////////////////////////////////////////////////////
                           EXTERNAL FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IRewardPools
    function fundEpochRewards(uint256 epoch, uint256 amount) external onlyRole(REWARDS_FUNDER_ROLE) nonReentrant {
        if (amount == 0) revert RewardPools_ZeroAmount();
        uint256 current = currentEpoch();
        if (epoch < current) revert RewardPools_EpochEnded(epoch, current);
        // The whole primary supply (about 2^90) fits 128 bits: a larger amount could not be transferred anyway.
        _pools[epoch].funded += SafeCast.toUint128(amount);
        PRIMARY_TOKEN.safeTransferFrom(msg.sender, address(this), amount);
        emit EpochRewardsFunded(epoch, msg.sender, amount);
    }

    /// @inheritdoc IRewardPools
    function voteRewardsRoot(uint256 epoch, bytes32 root, uint256[] calldata licenseIds) external {
        if (licenseIds.length == 0) revert RewardPools_NoLicenses();
        uint256 opensAt = _settlementOpensAt(epoch);
        uint256 closesAt = opensAt + _EPOCH_DURATION;
        if (block.timestamp < opensAt || block.timestamp >= closesAt) {
            revert RewardPools_VotingClosed(epoch, opensAt, closesAt);
        }
        Settlement memory settlement = _settlements[epoch];
        if (settlement.acceptedAt != 0) revert RewardPools_RootAccepted(epoch);
        // A live operator of every license: as for a job's vote, a root is the word of licenses that run a node.
        if (!NODE_REGISTRY.isLiveOperatorOf(msg.sender, licenseIds)) revert RewardPools_NotLiveOperator(msg.sender);

        BitMaps.BitMap storage voted = _voted[epoch][settlement.round];
        for (uint256 i = 0; i < licenseIds.length; ++i) {
            uint256 licenseId = licenseIds[i];
            if (voted.get(licenseId)) revert RewardPools_AlreadyVoted(epoch, licenseId);
            voted.set(licenseId);
        }
        uint256 votes = _rootVotes[epoch][settlement.round][root] + licenseIds.length;
        _rootVotes[epoch][settlement.round][root] = votes;
        emit RewardsRootVoted(epoch, root, msg.sender, settlement.round, licenseIds, votes);

        if (votes >= NODE_REGISTRY.quorum()) {
            _settlements[epoch] = Settlement({ root: root, acceptedAt: uint64(block.timestamp), round: settlement.round });
            emit RewardsRootAccepted(epoch, root, settlement.round, block.timestamp + DISPUTE_PERIOD);
        }
    }

    /// @inheritdoc IRewardPools
    function rejectRewardsRoot(uint256 epoch) external onlyRole(DEFAULT_ADMIN_ROLE) {
        Settlement memory settlement = _settlements[epoch];
        if (settlement.acceptedAt == 0 || block.timestamp >= settlement.acceptedAt + DISPUTE_PERIOD) {
            revert RewardPools_NotDisputable(epoch);
        }
        _settlements[epoch] = Settlement({ root: bytes32(0), acceptedAt: 0, round: settlement.round + 1 });
        emit RewardsRootRejected(epoch, settlement.root, settlement.round);
    }

    /// @inheritdoc IRewardPools
    function claimRewards(Claim[] calldata claims) external nonReentrant {
        uint256 total;
        for (uint256 i = 0; i < claims.length; ++i) {
            total += _claim(claims[i]);
        }
        if (total == 0) revert RewardPools_NothingToClaim();
        PRIMARY_TOKEN.forceApprove(address(STAKED_TOKEN), total);
        STAKED_TOKEN.stakeFor(msg.sender, total);
    }

    /// @inheritdoc IRewardPools
    function rollOverEpochRewards(uint256 epoch) external {
        Pool memory pool = _pools[epoch];
        Settlement memory settlement = _settlements[epoch];
        bool nobodyEarned = settlement.acceptedAt != 0 && settlement.root == bytes32(0)
            && block.timestamp >= settlement.acceptedAt + DISPUTE_PERIOD;
        bool neverSettled = settlement.acceptedAt == 0 && block.timestamp >= _settlementOpensAt(epoch) + _EPOCH_DURATION;
        if (pool.funded == 0 || pool.claimed != 0 || !(nobodyEarned || neverSettled)) {
            revert RewardPools_CannotRollOver(epoch);
        }
        uint256 current = currentEpoch();
        delete _pools[epoch];
        _pools[current].funded += pool.funded;
        emit EpochRewardsRolledOver(epoch, current, pool.funded);
    }

    /*//////////////////////////////////////////////////////////////
                                 VIEWS
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IRewardPools
    function currentEpoch() public view returns (uint256) {
        return (block.timestamp - _EPOCHS_START) / _EPOCH_DURATION;
    }

    /// @inheritdoc IRewardPools
    function settlementOf(uint256 epoch) external view returns (EpochSettlement memory) {
        Pool memory pool = _pools[epoch];
        Settlement memory settlement = _settlements[epoch];
        uint256 opensAt = _settlementOpensAt(epoch);
        bool accepted = settlement.acceptedAt != 0;
        return EpochSettlement({
            pool: pool.funded,
            claimed: pool.claimed,
            root: settlement.root,
            accepted: accepted,
            round: settlement.round,
            settlementOpensAt: opensAt,
            votingClosesAt: opensAt + _EPOCH_DURATION,
            claimsOpenAt: accepted ? settlement.acceptedAt + DISPUTE_PERIOD : 0
        });
    }

    /// @inheritdoc IRewardPools
    function rootVotesOf(uint256 epoch, bytes32 root) external view returns (uint256) {
        return _rootVotes[epoch][_settlements[epoch].round][root];
    }

    /// @inheritdoc IRewardPools
    function hasVotedRoot(uint256 epoch, uint256 licenseId) external view returns (bool) {
        return _voted[epoch][_settlements[epoch].round].get(licenseId);
    }

    /// @inheritdoc IRewardPools
    function isClaimed(uint256 epoch, uint256 licenseId) external view returns (bool) {
        return _claimed[epoch].get(licenseId);
    }

    /*//////////////////////////////////////////////////////////////
                                PRIVATE
    //////////////////////////////////////////////////////////////*/

    /// @dev Checks one claim, marks it paid and adds it to its epoch's claims; returns its amount.
    function _claim(Claim calldata claim) private returns (uint256) {
        uint256 epoch = claim.epoch;
        uint256 licenseId = claim.licenseId;
        if (_LICENSE.ownerOf(licenseId) != msg.sender) revert RewardPools_NotLicenseOwner(licenseId, msg.sender);
        Settlement memory settlement = _settlements[epoch];
        if (settlement.acceptedAt == 0 || block.timestamp < settlement.acceptedAt + DISPUTE_PERIOD) {
            revert RewardPools_ClaimsNotOpen(epoch);
        }
        if (_claimed[epoch].get(licenseId)) revert RewardPools_AlreadyClaimed(epoch, licenseId);
        bytes32 leaf = keccak256(bytes.concat(keccak256(abi.encode(epoch, licenseId, claim.amount))));
        if (!MerkleProof.verifyCalldata(claim.proof, settlement.root, leaf)) {
            revert RewardPools_InvalidProof(epoch, licenseId);
        }
        Pool memory pool = _pools[epoch];
        // Whatever a root says, an epoch never pays out more than its pool.
        if (claim.amount > pool.funded - pool.claimed) revert RewardPools_PoolExceeded(epoch, pool.funded, pool.claimed);
        _pools[epoch].claimed = pool.claimed + uint128(claim.amount);
        _claimed[epoch].set(licenseId);
        emit RewardsClaimed(epoch, licenseId, msg.sender, claim.amount);
        return claim.amount;
    }

    function _settlementOpensAt(uint256 epoch) private view returns (uint256) {
        return _EPOCHS_START + (epoch + 1) * _EPOCH_DURATION + SETTLEMENT_DELAY;
    }
}
