// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import { IERC20Metadata } from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata.sol";
import { IERC20Permit } from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Permit.sol";
import { IVotes } from "@openzeppelin/contracts/governance/utils/IVotes.sol";

/// @title IPrimaryToken
/// @notice The network's primary token, canonical on L1: a fixed-supply ERC-20 with EIP-2612 permit and
/// ERC-5805 votes. The whole supply is minted once at deployment; nobody can mint, pause or take tokens.
interface IPrimaryToken is IERC20Metadata, IERC20Permit, IVotes {
    /// @notice The fixed total supply, in base units: 1,000,000,000 tokens with 18 decimals.
    function TOTAL_SUPPLY() external view returns (uint256);
}
