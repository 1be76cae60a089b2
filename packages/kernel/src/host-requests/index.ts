export { HOST_REQUEST_TARGET, type HostReply, HostRequestRegistry } from "./registry.js";
