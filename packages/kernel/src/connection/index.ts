export { type ChannelName, KernelChannels, type MessageListener } from "./channels.js";
export {
	type ConnectionInfo,
	createConnectionFile,
	type PrivateConnectionFile,
	readBoundPorts,
} from "./connection-file.js";
