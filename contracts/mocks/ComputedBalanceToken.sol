// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @notice A rebasing-style token whose `balanceOf` is computed (shares × index), not stored: the owner's
///         shares sit in a mapping at slot 0, so a `balanceOf` call reads `keccak256(owner, 0)`, but that
///         word is not the balance. `POST /api/ccq-evm?proof=true` must refuse it (422) rather than prove
///         the shares. Not deployed live.
contract ComputedBalanceToken {
    /// @notice The index's unit: an index of `INDEX_UNIT` makes a share worth one base unit.
    uint256 public constant INDEX_UNIT = 1e18;

    mapping(address owner => uint256 shares) internal _shares;

    /// @notice Base units per share, scaled by `INDEX_UNIT`.
    uint256 public immutable INDEX;

    /// @notice Emitted once per holder at deployment, as an ERC-20 mint would.
    event Transfer(address indexed from, address indexed to, uint256 value);

    constructor(address holder, uint256 shares, uint256 index) {
        INDEX = index;
        _shares[holder] = shares;
        emit Transfer(address(0), holder, (shares * index) / INDEX_UNIT);
    }

    /// @notice The owner's balance: its shares times the index.
    function balanceOf(address owner) external view returns (uint256) {
        return (_shares[owner] * INDEX) / INDEX_UNIT;
    }
}
