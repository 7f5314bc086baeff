export { Bridge, statusName, type MessageInfo, type MessageStatusName, type WaitOptions } from "./bridge.ts";
export { BridgeError, type BridgeErrorCode } from "./errors.ts";
export { devnetNetwork, testnetNetwork, type BridgeNetwork, type OpL1Addresses } from "./network.ts";
