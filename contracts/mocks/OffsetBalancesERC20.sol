// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @notice A minimal ERC-20-like token whose balances mapping is not at OpenZeppelin's slot 0: two variables come
///         first, so `balanceOf` lives at slot 2. Tests that a storage proof verifier is told the slot rather than
///         assuming it. Not deployed live.
contract OffsetBalancesERC20 {
    /// @notice Slot 0: the token's owner (only here to push the balances mapping down).
    address public owner;

    /// @notice Slot 1: the total supply.
    uint256 public totalSupply;

    /// @notice Slot 2: the balances.
    mapping(address holder => uint256 balance) public balanceOf;

    /// @notice Emitted on every transfer and mint, as ERC-20 does.
    event Transfer(address indexed from, address indexed to, uint256 value);

    /// @notice Thrown when a transfer exceeds the sender's balance.
    error OffsetBalancesERC20_InsufficientBalance(uint256 balance, uint256 amount);

    constructor(address recipient, uint256 supply) {
        owner = msg.sender;
        totalSupply = supply;
        balanceOf[recipient] = supply;
        emit Transfer(address(0), recipient, supply);
    }

    /// @notice Moves `amount` from the caller to `to`.
    function transfer(address to, uint256 amount) external returns (bool) {
        uint256 balance = balanceOf[msg.sender];
        if (balance < amount) revert OffsetBalancesERC20_InsufficientBalance(balance, amount);
        balanceOf[msg.sender] = balance - amount;
        balanceOf[to] += amount;
        emit Transfer(msg.sender, to, amount);
        return true;
    }
}
