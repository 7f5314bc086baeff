// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { IERC1271 } from "@openzeppelin/contracts/interfaces/IERC1271.sol";
import { ECDSA } from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";

/// @notice A minimal contract wallet (ERC-1271) for tests: a signature is valid when its owner key signed the hash.
contract MockContractWallet is IERC1271 {
    address public immutable OWNER;

    constructor(address owner_) {
        OWNER = owner_;
    }

    /// @inheritdoc IERC1271
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        (address signer, ECDSA.RecoverError error,) = ECDSA.tryRecoverCalldata(hash, signature);
        return error == ECDSA.RecoverError.NoError && signer == OWNER ? IERC1271.isValidSignature.selector : bytes4(0xffffffff);
    }
}
