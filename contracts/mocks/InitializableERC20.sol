// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { ERC20 } from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @notice An OpenZeppelin ERC-20 minted by `initialize` instead of its constructor, so that it can run behind an
///         ERC1967 proxy (`StorageProofTokenProxy`), whose storage then holds the balances at OpenZeppelin's slot
///         0: the storage-proof tests' proxied token. Not deployed live.
contract InitializableERC20 is ERC20 {
    /// @notice Thrown when `initialize` is called a second time.
    error InitializableERC20_AlreadyInitialized();

    constructor() ERC20("Proxied", "PRX") {}

    /// @notice Mints `supply` to `recipient`, once (through the proxy's constructor).
    function initialize(address recipient, uint256 supply) external {
        if (totalSupply() != 0) revert InitializableERC20_AlreadyInitialized();
        _mint(recipient, supply);
    }
}
