export {
	AGENT_MESSAGE_TYPE,
	type AgentMail,
	dataBlock,
	type FamilyRole,
	MAX_MESSAGE_CHARS,
	MAX_PENDING,
	MAX_SENDS_PER_MINUTE,
	Mailbox,
	MessageRefused,
	mailText,
} from "./mailbox.js";
export { type Family, type FamilyMember, MESSAGE_REQUESTS, messageHostHandlers } from "./router.js";
