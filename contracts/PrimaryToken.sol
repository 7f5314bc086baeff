// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { ERC20 } from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import { ERC20Permit } from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Permit.sol";
import { ERC20Votes } from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Votes.sol";
import { IERC20Permit } from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Permit.sol";
import { Nonces } from "@openzeppelin/contracts/utils/Nonces.sol";

import { IPrimaryToken } from "@avn/contracts/interfaces/IPrimaryToken.sol";

/// @title PrimaryToken
/// @notice See {IPrimaryToken}. The contract has no owner and no privileged function: its whole supply
/// is minted to `recipient` in the constructor and can never grow.
contract PrimaryToken is ERC20, ERC20Permit, ERC20Votes, IPrimaryToken {
    /// @inheritdoc IPrimaryToken
    uint256 public constant TOTAL_SUPPLY = 1_000_000_000 * 1e18;

    /// @param name_ The token name (also the EIP-712 domain name used by permit).
    /// @param symbol_ The token symbol.
    /// @param recipient The account that receives the whole supply (reverts with
    /// `ERC20InvalidReceiver` when zero).
    constructor(
        string memory name_,
        string memory symbol_,
        address recipient
    ) ERC20(name_, symbol_) ERC20Permit(name_) {
        _mint(recipient, TOTAL_SUPPLY);
    }

    /// @inheritdoc IERC20Permit
    function nonces(address owner) public view override(ERC20Permit, IERC20Permit, Nonces) returns (uint256) {
        return super.nonces(owner);
    }

    /// @dev Both ERC20 and ERC20Votes define `_update`; the votes extension moves voting units with balances.
    function _update(address from, address to, uint256 value) internal override(ERC20, ERC20Votes) {
        super._update(from, to, value);
    }
}
