export type { QueuedInput } from "./input-queue.js";
export { LocalLink, localLink, userMessage } from "./local-link.js";
export {
	type ConsoleLevel,
	type KernelStatusEvent,
	type LinkOwnEvent,
	type LinkRunEnd,
	type SessionEvent,
	type SessionLine,
	type SessionSideEvent,
	unknownEvent,
} from "./session-events.js";
export type { LinkCommand, LinkInterrupt, LinkStatus, PromptOptions, SessionLink } from "./session-link.js";
