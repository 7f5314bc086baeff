// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title GasMeter
/// @notice Measures the gas a call uses, for the benchmarks: a transaction's receipt cannot show it once
/// EIP-7623 (Prague) charges calldata-heavy transactions a floor price, which a storage proof's transaction pays.
contract GasMeter {
    /// @notice Thrown when the measured call reverts, with its revert data.
    error GasMeter_CallFailed(bytes reason);

    /// @notice The gas `target.call(data)` used: the callee's execution, the call's access cost (2,600 for a cold
    /// account) and the copy of `data` into the call.
    function measure(address target, bytes calldata data) external returns (uint256 gasUsed) {
        uint256 before = gasleft();
        // A low-level call: the meter wraps any function of any contract, and measures what it costs.
        // solhint-disable-next-line avoid-low-level-calls
        (bool ok, bytes memory reason) = target.call(data);
        gasUsed = before - gasleft();
        if (!ok) revert GasMeter_CallFailed(reason);
    }
}
