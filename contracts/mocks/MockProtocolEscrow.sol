// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { IStakedToken } from "@avn/contracts/interfaces/IStakedToken.sol";

/// @notice A stand-in for a protocol contract that holds staked tokens (the verification registry's
/// collateral escrow, built later): it takes deposits, returns them, and burns them for services. Used by
/// tests only; it keeps no per-user accounting on purpose.
contract MockProtocolEscrow {
    IStakedToken public immutable STAKED_TOKEN;

    constructor(IStakedToken stakedToken) {
        STAKED_TOKEN = stakedToken;
    }

    function deposit(uint256 amount) external {
        STAKED_TOKEN.transferFrom(msg.sender, address(this), amount);
    }

    function withdraw(address to, uint256 amount) external {
        STAKED_TOKEN.transfer(to, amount);
    }

    function burnForService(uint256 amount, address primaryRecipient) external {
        STAKED_TOKEN.burnForService(amount, primaryRecipient);
    }
}
