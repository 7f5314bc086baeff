// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { ReentrancyGuardTransient } from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";

import { IVerificationRegistry } from "@avn/contracts/interfaces/IVerificationRegistry.sol";
import { LicenseAccount } from "../libraries/VotePacking.sol";

/// @title EpochRewards
/// @notice The verification registry's epoch reward pools: funded in primary tokens for the current or a
/// future epoch, shared after the epoch among the licenses in proportion to their agreeing votes in it, paid in
/// staked tokens. Kept apart from the registry's jobs, collateral and fees, whose rules it does not share; the
/// registry tells it of each agreeing vote (`_creditAgreeingVote`, `_countEpochVotes`) and supplies the
/// token movements and checks it needs (the hooks below).
/// @dev A license's current epoch and its agreeing votes in it share one slot with the license's fee credit
/// and vote statistics (`LicenseAccount`), so a finalization writes one slot per license it pays;
/// an epoch's votes move to `_epochVotes` only when the license first earns in a later epoch. The account
/// mapping is declared here, where the epoch half of it is read and moved; the registry writes the rest.
abstract contract EpochRewards is ReentrancyGuardTransient, IVerificationRegistry {
    /// @inheritdoc IVerificationRegistry
    bytes32 public constant REWARDS_FUNDER_ROLE = keccak256("REWARDS_FUNDER_ROLE");

    /// @inheritdoc IVerificationRegistry
    uint256 public immutable EPOCH_DURATION;

    /// @inheritdoc IVerificationRegistry
    uint256 public immutable EPOCHS_START;

    mapping(uint256 licenseId => LicenseAccount account) internal _licenseAccounts;

    mapping(uint256 epoch => uint256 amount) internal _epochPools;

    mapping(uint256 epoch => uint256 votes) internal _epochTotalVotes;

    /// @dev A license's agreeing votes of an epoch before the one in its account.
    mapping(uint256 epoch => mapping(uint256 licenseId => uint256 votes)) internal _epochVotes;

    /// @dev Before `nonReentrant` wherever both apply, as the role check came first when it was the registry's
    /// own `onlyRole` modifier: an unauthorized call reverts with the role error either way.
    modifier onlyRewardsFunder() {
        _checkRewardsFunder();
        _;
    }

    /// @param epochDuration The length of a reward epoch, in seconds. The deriving contract refuses zero
    /// (`VerificationRegistry_InvalidEpochDuration`) in its constructor, after the checks it made first, so
    /// its deployment errors stay in the order they always had.
    constructor(uint256 epochDuration) {
        EPOCH_DURATION = epochDuration;
        EPOCHS_START = block.timestamp;
    }

    /*//////////////////////////////////////////////////////////////
                           EXTERNAL FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IVerificationRegistry
    function claimRewards(uint256 epoch, uint256[] calldata licenseIds) external nonReentrant {
        uint256 current = currentEpoch();
        if (epoch >= current) revert VerificationRegistry_EpochNotEnded(epoch, current);
        uint256 pool = _epochPools[epoch];
        uint256 totalVotes = _epochTotalVotes[epoch];
        uint256 total;
        for (uint256 i = 0; i < licenseIds.length; ++i) {
            uint256 licenseId = licenseIds[i];
            _checkLicenseOwner(licenseId);
            uint256 votes = _takeEpochVotes(epoch, licenseId);
            if (votes == 0) continue;
            // Rounded down: the pool never pays out more than it holds.
            uint256 amount = pool * votes / totalVotes;
            total += amount;
            emit RewardsClaimed(epoch, licenseId, msg.sender, amount);
        }
        if (total == 0) revert VerificationRegistry_NothingToClaim();
        _stakeFor(msg.sender, total);
    }

    /// @inheritdoc IVerificationRegistry
    function fundEpochRewards(uint256 epoch, uint256 amount) external onlyRewardsFunder nonReentrant {
        if (amount == 0) revert VerificationRegistry_ZeroAmount();
        uint256 current = currentEpoch();
        if (epoch < current) revert VerificationRegistry_EpochEnded(epoch, current);
        _collectRewardFunds(msg.sender, amount);
        _epochPools[epoch] += amount;
        emit EpochRewardsFunded(epoch, msg.sender, amount);
    }

    /// @inheritdoc IVerificationRegistry
    function rollOverEpochRewards(uint256 epoch) external {
        uint256 current = currentEpoch();
        if (epoch >= current) revert VerificationRegistry_EpochNotEnded(epoch, current);
        uint256 pool = _epochPools[epoch];
        if (pool == 0 || _epochTotalVotes[epoch] != 0) revert VerificationRegistry_CannotRollOver(epoch);
        delete _epochPools[epoch];
        _epochPools[current] += pool;
        emit EpochRewardsRolledOver(epoch, current, pool);
    }

    /*//////////////////////////////////////////////////////////////
                                 VIEWS
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IVerificationRegistry
    function epochRewardInfo(
        uint256 epoch,
        uint256 licenseId
    ) external view returns (uint256 pool, uint256 totalVotes, uint256 licenseVotes) {
        LicenseAccount account = _licenseAccounts[licenseId];
        licenseVotes = account.epochOf() == epoch ? account.epochVotesOf() : _epochVotes[epoch][licenseId];
        return (_epochPools[epoch], _epochTotalVotes[epoch], licenseVotes);
    }

    /// @inheritdoc IVerificationRegistry
    function currentEpoch() public view returns (uint256) {
        return (block.timestamp - EPOCHS_START) / EPOCH_DURATION;
    }

    /*//////////////////////////////////////////////////////////////
                      INTERNAL: FOR THE REGISTRY
    //////////////////////////////////////////////////////////////*/

    /// @dev Adds `feeShare` to the license's fee credit, one agreeing vote in `epoch` and one agreed outcome,
    /// in one read and one write of its account, first moving the votes of an earlier epoch out of it.
    function _creditAgreeingVote(uint256 licenseId, uint256 feeShare, uint256 epoch) internal {
        LicenseAccount account = _licenseAccounts[licenseId];
        // The account holds one epoch's votes; an earlier epoch's leave it for their own slot, where a
        // claim finds them, only now that the license earns in a later one.
        uint256 accountEpoch = account.epochOf();
        if (accountEpoch != epoch) {
            uint256 earlierVotes = account.epochVotesOf();
            if (earlierVotes != 0) _epochVotes[accountEpoch][licenseId] = earlierVotes;
            account = account.startEpoch(epoch);
        }
        _licenseAccounts[licenseId] = account.creditAgreeingVote(feeShare);
    }

    /// @dev Adds a finalization's `agreeingVotes` to `epoch`'s total, the denominator of its pool's shares.
    function _countEpochVotes(uint256 epoch, uint256 agreeingVotes) internal {
        _epochTotalVotes[epoch] += agreeingVotes;
    }

    /*//////////////////////////////////////////////////////////////
                      HOOKS: THE REGISTRY SUPPLIES
    //////////////////////////////////////////////////////////////*/

    /// @dev Reverts unless the caller may fund reward pools.
    function _checkRewardsFunder() internal view virtual;

    /// @dev Reverts unless the caller owns `licenseId`.
    function _checkLicenseOwner(uint256 licenseId) internal view virtual;

    /// @dev Takes `amount` primary tokens from `funder` into the pools' keeping.
    function _collectRewardFunds(address funder, uint256 amount) internal virtual;

    /// @dev Stakes `amount` of the primary tokens held here for `account` (rewards are paid so).
    function _stakeFor(address account, uint256 amount) internal virtual;

    /*//////////////////////////////////////////////////////////////
                                PRIVATE
    //////////////////////////////////////////////////////////////*/

    /// @dev Takes (and clears) a license's unclaimed agreeing votes of an ended epoch.
    function _takeEpochVotes(uint256 epoch, uint256 licenseId) private returns (uint256 votes) {
        LicenseAccount account = _licenseAccounts[licenseId];
        if (account.epochOf() == epoch) {
            votes = account.epochVotesOf();
            _licenseAccounts[licenseId] = account.withoutEpochVotes();
        } else {
            votes = _epochVotes[epoch][licenseId];
            delete _epochVotes[epoch][licenseId];
        }
    }
}
