// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { AccessControlDefaultAdminRules } from
    "@openzeppelin/contracts/access/extensions/AccessControlDefaultAdminRules.sol";
import { IERC20 } from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import { SafeERC20 } from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import { ERC721 } from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import { ERC721Enumerable } from "@openzeppelin/contracts/token/ERC721/extensions/ERC721Enumerable.sol";
import { IERC165 } from "@openzeppelin/contracts/utils/introspection/IERC165.sol";

import { INodeLicense } from "@avn/contracts/interfaces/INodeLicense.sol";
import { INodeRegistry } from "@avn/contracts/interfaces/INodeRegistry.sol";

/// @title NodeLicense
/// @notice See {INodeLicense}.
/// @dev Enumerable so that a node can list the licenses of the wallets it serves with
/// `tokenOfOwnerByIndex`. Every change of hands after the mint tells the node registry, which deletes the
/// license's delegation there and then: checking a delegation then reads one slot of the registry and
/// nothing of this contract (the hot path of every vote and every attestation check).
contract NodeLicense is ERC721Enumerable, AccessControlDefaultAdminRules, INodeLicense {
    using SafeERC20 for IERC20;

    /*//////////////////////////////////////////////////////////////
                               CONSTANTS
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc INodeLicense
    uint256 public constant MAX_PER_MINT = 100;

    /// @inheritdoc INodeLicense
    uint256 public constant MAX_TIERS = 32;

    /*//////////////////////////////////////////////////////////////
                               IMMUTABLES
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc INodeLicense
    uint256 public immutable MAX_SUPPLY;

    /// @inheritdoc INodeLicense
    IERC20 public immutable PAYMENT_TOKEN;

    /*//////////////////////////////////////////////////////////////
                                STORAGE
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc INodeLicense
    address public treasury;

    /// @inheritdoc INodeLicense
    uint256 public totalMinted;

    PriceTier[] internal _priceTiers;

    /// @inheritdoc INodeLicense
    INodeRegistry public nodeRegistry;

    /*//////////////////////////////////////////////////////////////
                              CONSTRUCTOR
    //////////////////////////////////////////////////////////////*/

    /// @param name_ The collection name.
    /// @param symbol_ The collection symbol.
    /// @param paymentToken The primary token licenses are paid in.
    /// @param treasury_ Where proceeds go.
    /// @param maxSupply The fixed maximum number of licenses.
    /// @param tiers The initial price tiers.
    /// @param admin The governance account.
    /// @param adminTransferDelay The delay of the two-step admin transfer, in seconds.
    constructor(
        string memory name_,
        string memory symbol_,
        IERC20 paymentToken,
        address treasury_,
        uint256 maxSupply,
        PriceTier[] memory tiers,
        address admin,
        uint48 adminTransferDelay
    ) ERC721(name_, symbol_) AccessControlDefaultAdminRules(adminTransferDelay, admin) {
        if (address(paymentToken) == address(0)) revert NodeLicense_ZeroAddress();
        PAYMENT_TOKEN = paymentToken;
        MAX_SUPPLY = maxSupply;
        _setTreasury(treasury_);
        _setPriceTiers(tiers);
    }

    /*//////////////////////////////////////////////////////////////
                          EXTERNAL FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc INodeLicense
    function buy(uint256 quantity, uint256 maxTotalPrice) external returns (uint256 firstId) {
        uint256 totalPrice = quote(quantity);
        if (totalPrice > maxTotalPrice) revert NodeLicense_PriceAboveLimit(totalPrice, maxTotalPrice);
        // Payment first: the primary token is a plain ERC-20 and `_safeMint` is not used, so no callback
        // can run between the payment and the mint.
        if (totalPrice != 0) PAYMENT_TOKEN.safeTransferFrom(msg.sender, treasury, totalPrice);
        firstId = _mintBatch(msg.sender, quantity);
        emit LicensesPurchased(msg.sender, firstId, quantity, totalPrice);
    }

    /// @inheritdoc INodeLicense
    function airdrop(address to, uint256 quantity) external onlyRole(DEFAULT_ADMIN_ROLE) returns (uint256 firstId) {
        _checkQuantity(quantity);
        firstId = _mintBatch(to, quantity);
        emit LicensesAirdropped(to, firstId, quantity);
    }

    /// @inheritdoc INodeLicense
    function setPriceTiers(PriceTier[] calldata tiers) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setPriceTiers(tiers);
    }

    /// @inheritdoc INodeLicense
    function setTreasury(address treasury_) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setTreasury(treasury_);
    }

    /// @inheritdoc INodeLicense
    function setNodeRegistry(INodeRegistry registry) external onlyRole(DEFAULT_ADMIN_ROLE) {
        if (address(registry) == address(0)) revert NodeLicense_ZeroAddress();
        // Once only: a registry whose delegations stopped hearing of transfers could be hijacked through them.
        if (address(nodeRegistry) != address(0)) revert NodeLicense_NodeRegistryAlreadySet(nodeRegistry);
        nodeRegistry = registry;
        emit NodeRegistrySet(registry);
    }

    /// @inheritdoc INodeLicense
    function priceTiers() external view returns (PriceTier[] memory) {
        return _priceTiers;
    }

    /*//////////////////////////////////////////////////////////////
                           PUBLIC FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc INodeLicense
    function quote(uint256 quantity) public view returns (uint256 totalPrice) {
        _checkQuantity(quantity);
        // Licenses are numbered in sale order; walk the tiers from the next number to the last one bought.
        // The last tier covers MAX_SUPPLY and `_checkQuantity` keeps `last` within it, so all are priced.
        uint256 priced = totalMinted;
        uint256 last = priced + quantity;
        PriceTier[] storage tiers = _priceTiers;
        for (uint256 i = 0; i < tiers.length && priced < last; ++i) {
            uint256 tierEnd = tiers[i].upToSupply;
            if (tierEnd <= priced) continue;
            uint256 upTo = tierEnd < last ? tierEnd : last;
            totalPrice += (upTo - priced) * tiers[i].price;
            priced = upTo;
        }
    }

    /// @inheritdoc ERC721Enumerable
    function supportsInterface(bytes4 interfaceId)
        public
        view
        override(ERC721Enumerable, AccessControlDefaultAdminRules, IERC165)
        returns (bool)
    {
        return ERC721Enumerable.supportsInterface(interfaceId)
            || AccessControlDefaultAdminRules.supportsInterface(interfaceId);
    }

    /*//////////////////////////////////////////////////////////////
                          INTERNAL FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    /// @dev Every change of hands after the mint voids the license's delegation (a fresh license has none).
    /// The registry is trusted code of this protocol that only deletes a slot and emits an event.
    function _update(address to, uint256 tokenId, address auth) internal override returns (address from) {
        from = super._update(to, tokenId, auth);
        if (from != address(0)) {
            INodeRegistry registry = nodeRegistry;
            if (address(registry) != address(0)) registry.voidDelegation(tokenId);
        }
    }

    /*//////////////////////////////////////////////////////////////
                          PRIVATE FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    function _checkQuantity(uint256 quantity) private view {
        if (quantity == 0 || quantity > MAX_PER_MINT) revert NodeLicense_InvalidQuantity(quantity, MAX_PER_MINT);
        if (totalMinted + quantity > MAX_SUPPLY) {
            revert NodeLicense_MaxSupplyExceeded(totalMinted, quantity, MAX_SUPPLY);
        }
    }

    /// @dev `_mint`, not `_safeMint`: no receiver callback, so no reentrancy through a purchase.
    function _mintBatch(address to, uint256 quantity) private returns (uint256 firstId) {
        if (to == address(0)) revert NodeLicense_ZeroAddress();
        firstId = totalMinted + 1;
        totalMinted += quantity;
        for (uint256 i = 0; i < quantity; ++i) {
            _mint(to, firstId + i);
        }
    }

    function _setPriceTiers(PriceTier[] memory tiers) private {
        uint256 count = tiers.length;
        if (count == 0 || count > MAX_TIERS || tiers[count - 1].upToSupply < MAX_SUPPLY) {
            revert NodeLicense_InvalidPriceTiers();
        }
        for (uint256 i = 1; i < count; ++i) {
            if (tiers[i].upToSupply <= tiers[i - 1].upToSupply || tiers[i].price < tiers[i - 1].price) {
                revert NodeLicense_InvalidPriceTiers();
            }
        }
        PriceTier[] memory oldTiers = _priceTiers;
        delete _priceTiers;
        for (uint256 i = 0; i < count; ++i) {
            _priceTiers.push(tiers[i]);
        }
        emit PriceTiersUpdated(oldTiers, tiers);
    }

    function _setTreasury(address treasury_) private {
        if (treasury_ == address(0)) revert NodeLicense_ZeroAddress();
        address oldTreasury = treasury;
        treasury = treasury_;
        emit TreasuryUpdated(oldTreasury, treasury_);
    }
}
