// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { ERC1155 } from "@openzeppelin/contracts/token/ERC1155/ERC1155.sol";

/// @notice A plain OpenZeppelin ERC-1155 with `amounts[i]` of token `ids[i]` minted to one holder: a
///         source-chain asset for the balance adapter's tests and the local stack's demo holdings (the
///         items of a game collection). Not deployed live.
contract PlainERC1155 is ERC1155 {
    constructor(address holder, uint256[] memory ids, uint256[] memory amounts) ERC1155("") {
        // _mintBatch to an EOA (the holder) makes no acceptance call; ids and amounts must have one length.
        _mintBatch(holder, ids, amounts, "");
    }
}
