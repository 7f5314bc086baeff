// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { ERC20 } from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @notice A plain OpenZeppelin ERC-20, the gas baseline of `npm run bench:gas`. Not deployed live.
contract PlainERC20 is ERC20 {
    constructor(address recipient, uint256 supply) ERC20("Plain", "PLAIN") {
        _mint(recipient, supply);
    }
}
