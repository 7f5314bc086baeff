// Prints the gas of each token operation beside a plain OpenZeppelin ERC-20 transfer measured in the
// same run, on Hardhat's in-process network. Usage: npm run bench:gas
import { network } from "hardhat";

import { formatGasTable, measureTokenGas } from "../src/bench/token-gas.js";

const { ethers, networkHelpers } = await network.create();
console.log(formatGasTable(await measureTokenGas(ethers, networkHelpers)));
