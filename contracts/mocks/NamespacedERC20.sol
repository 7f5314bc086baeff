// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @notice An ERC-20's balances kept as OpenZeppelin's upgradeable ERC20 (v5) keeps them: in the ERC-7201
///         namespace `openzeppelin.storage.ERC20`, `_balances` first. Deployed behind an ERC1967 proxy
///         (StorageProofTokenProxy) and initialized through it, so its storage is the proxy's: an asset of the
///         storage-proof tests. Not deployed live.
contract NamespacedERC20 {
    /// @custom:storage-location erc7201:openzeppelin.storage.ERC20
    struct ERC20Storage {
        mapping(address account => uint256 balance) _balances;
        mapping(address account => mapping(address spender => uint256 allowance)) _allowances;
        uint256 _totalSupply;
    }

    // keccak256(abi.encode(uint256(keccak256("openzeppelin.storage.ERC20")) - 1)) & ~bytes32(uint256(0xff))
    bytes32 private constant ERC20_STORAGE_LOCATION = 0x52c63247e1f47db19d5ce0460030c497f067ca4cebf71ba98eeadabe20bace00;

    /// @notice Thrown when `initialize` is called a second time.
    error NamespacedERC20_AlreadyInitialized();

    /// @notice Emitted when tokens are minted (`from` is zero).
    event Transfer(address indexed from, address indexed to, uint256 value);

    /// @notice Mints `supply` to `recipient`, once (through the proxy's constructor).
    function initialize(address recipient, uint256 supply) external {
        ERC20Storage storage $ = _storage();
        if ($._totalSupply != 0) revert NamespacedERC20_AlreadyInitialized();
        $._totalSupply = supply;
        $._balances[recipient] = supply;
        emit Transfer(address(0), recipient, supply);
    }

    function balanceOf(address account) external view returns (uint256) {
        return _storage()._balances[account];
    }

    function totalSupply() external view returns (uint256) {
        return _storage()._totalSupply;
    }

    function _storage() private pure returns (ERC20Storage storage $) {
        // The only way to point a storage reference at a computed slot (as OpenZeppelin's upgradeable ERC20 does).
        // solhint-disable-next-line no-inline-assembly
        assembly {
            $.slot := ERC20_STORAGE_LOCATION
        }
    }
}
