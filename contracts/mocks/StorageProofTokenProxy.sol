// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { ERC1967Proxy } from "@openzeppelin/contracts/proxy/ERC1967/ERC1967Proxy.sol";

/// @notice OpenZeppelin's ERC1967Proxy, compiled here so that tests can deploy it: a proxied token for the storage
///         proof tests, whose balances live in the proxy's storage, not the implementation's. Not deployed live.
contract StorageProofTokenProxy is ERC1967Proxy {
    /// @param implementation The token implementation.
    /// @param data The initializer call, made through the proxy.
    constructor(address implementation, bytes memory data) payable ERC1967Proxy(implementation, data) {}
}
