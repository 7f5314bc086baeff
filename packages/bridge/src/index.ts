export { Bridge, statusName, type MessageInfo, type MessageStatusName, type WaitOptions } from "./bridge.ts";
export { runCli } from "./cli.ts";
export { BridgeError, describeUnexpected, redactUrls, type BridgeErrorCode } from "./errors.ts";
export { devnetNetwork, testnetNetwork, type BridgeNetwork, type OpL1Addresses } from "./network.ts";
