export type { QueuedInput } from "./input-queue.js";
export { LocalLink, linkRunEnd, localLink, userMessage } from "./local-link.js";
export type {
	LinkCommand,
	LinkEvent,
	LinkInterrupt,
	LinkRunEnd,
	LinkStatus,
	SessionLink,
} from "./session-link.js";
