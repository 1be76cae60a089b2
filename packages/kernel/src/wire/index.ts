export { WireCodec } from "./codec.js";
export { DELIMITER, type JupyterMessage, type MessageHeader, PROTOCOL_VERSION } from "./message.js";
