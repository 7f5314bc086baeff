// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { ERC721 } from "@openzeppelin/contracts/token/ERC721/ERC721.sol";

/// @notice A plain OpenZeppelin ERC-721 with tokens 1..count minted to one holder: a source-chain asset for
///         the balance adapter's tests and the local stack's demo holdings. Not deployed live.
contract PlainERC721 is ERC721 {
    constructor(address holder, uint256 count) ERC721("Plain NFT", "PNFT") {
        for (uint256 tokenId = 1; tokenId <= count; ++tokenId) {
            _mint(holder, tokenId);
        }
    }
}
