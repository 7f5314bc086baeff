// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import { IERC20 } from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import { IERC721Enumerable } from "@openzeppelin/contracts/token/ERC721/extensions/IERC721Enumerable.sol";

import { INodeRegistry } from "./INodeRegistry.sol";

/// @title INodeLicense
/// @notice Transferable ERC-721 node licenses. A license is the right to run a circuit node (through a
/// delegated operator, see INodeRegistry). Licenses are sold for the primary token at a price that rises
/// with the number sold, in governance-set tiers, up to a fixed maximum supply; proceeds go to the
/// treasury. Governance can mint for airdrops. Ids start at 1.
interface INodeLicense is IERC721Enumerable {
    /// @notice A price tier: every license whose number (1-based sale order) is at most `upToSupply`, and
    /// above the previous tier's `upToSupply`, costs `price` primary-token base units.
    struct PriceTier {
        uint64 upToSupply;
        uint128 price;
    }

    /// @notice Emitted when `buyer` buys `quantity` licenses starting at `firstId` for `totalPrice`.
    event LicensesPurchased(address indexed buyer, uint256 firstId, uint256 quantity, uint256 totalPrice);

    /// @notice Emitted when governance mints `quantity` licenses starting at `firstId` to `to`.
    event LicensesAirdropped(address indexed to, uint256 firstId, uint256 quantity);

    /// @notice Emitted when governance replaces the price tiers.
    event PriceTiersUpdated(PriceTier[] oldTiers, PriceTier[] newTiers);

    /// @notice Emitted when governance changes the treasury.
    event TreasuryUpdated(address oldTreasury, address newTreasury);

    /// @notice Emitted once, when governance names the node registry that hears of every transfer.
    event NodeRegistrySet(INodeRegistry nodeRegistry);

    /// @notice Thrown when an address that must be set is zero.
    error NodeLicense_ZeroAddress();

    /// @notice Thrown when the node registry is set a second time (it is set once, for good).
    error NodeLicense_NodeRegistryAlreadySet(INodeRegistry nodeRegistry);

    /// @notice Thrown when a purchase or airdrop quantity is zero or above `MAX_PER_MINT`.
    error NodeLicense_InvalidQuantity(uint256 quantity, uint256 maxPerMint);

    /// @notice Thrown when minting `quantity` more would exceed the maximum supply.
    error NodeLicense_MaxSupplyExceeded(uint256 totalMinted, uint256 quantity, uint256 maxSupply);

    /// @notice Thrown when the purchase would cost more than the buyer's `maxTotalPrice`.
    error NodeLicense_PriceAboveLimit(uint256 totalPrice, uint256 maxTotalPrice);

    /// @notice Thrown when tiers are empty, too many, not strictly ascending in supply, falling in price, or
    /// do not cover the maximum supply.
    error NodeLicense_InvalidPriceTiers();

    /// @notice The most licenses one purchase or airdrop may mint (bounds the mint loop).
    function MAX_PER_MINT() external view returns (uint256);

    /// @notice The most price tiers governance may set (bounds the price loop).
    function MAX_TIERS() external view returns (uint256);

    /// @notice The fixed maximum number of licenses.
    function MAX_SUPPLY() external view returns (uint256);

    /// @notice The token licenses are paid in (the primary token).
    function PAYMENT_TOKEN() external view returns (IERC20);

    /// @notice Where purchase proceeds go.
    function treasury() external view returns (address);

    /// @notice The number of licenses minted so far; the next license gets id `totalMinted() + 1`.
    function totalMinted() external view returns (uint256);

    /// @notice The current price tiers.
    function priceTiers() external view returns (PriceTier[] memory);

    /// @notice What buying `quantity` licenses now costs in total.
    function quote(uint256 quantity) external view returns (uint256 totalPrice);

    /// @notice The node registry told of every change of hands (zero until governance sets it, once). It
    /// voids the license's delegation, so a new owner always delegates afresh.
    function nodeRegistry() external view returns (INodeRegistry);

    /// @notice Governance names the node registry, once; the registry accepts delegations only after.
    function setNodeRegistry(INodeRegistry registry) external;

    /// @notice Buys `quantity` licenses for the caller, paying at most `maxTotalPrice` primary tokens (the
    /// price rises with supply, so the limit protects against being front-run). Requires an allowance.
    /// @return firstId The id of the first license bought; the others follow consecutively.
    function buy(uint256 quantity, uint256 maxTotalPrice) external returns (uint256 firstId);

    /// @notice Governance mints `quantity` licenses to `to` for free (airdrops).
    function airdrop(address to, uint256 quantity) external returns (uint256 firstId);

    /// @notice Governance replaces the price tiers (they apply to future sales).
    function setPriceTiers(PriceTier[] calldata tiers) external;

    /// @notice Governance sets the treasury.
    function setTreasury(address treasury) external;
}
