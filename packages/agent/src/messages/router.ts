import type { HostRequestHandler } from "prime-agent-kernel";
import {
	type AgentMail,
	type FamilyRole,
	MAX_MESSAGE_CHARS,
	type Mailbox,
	MessageRefused,
	SendRate,
} from "./mailbox.js";

/** Another agent as the router sees it: its mailbox, when it can receive. */
export interface FamilyMember {
	name: string;
	/** Absent while the agent is starting, or once it failed or was cancelled (then `why` says so). */
	mailbox?: Mailbox;
	why?: string;
}

/** The family of one agent: who it may write to. */
export interface Family {
	/** The sending agent's own name. */
	self: string;
	parent?: FamilyMember & { noteReply(): void };
	child(name: string): FamilyMember | undefined;
	childNames(): string[];
	sibling(name: string): FamilyMember | undefined;
	siblingNames(): string[];
}

export const MESSAGE_REQUESTS = { send: "agent_message.send", inbox: "agent_message.inbox" } as const;

const SEND_KEYS = ["text", "receiver_role", "receiver_name"];
const ROLES: FamilyRole[] = ["parent", "sibling", "child"];

/** Host handlers for `agent_message.send()` and `agent_message.inbox()` in one agent's kernel. */
export function messageHostHandlers(own: Mailbox, family: Family): Record<string, HostRequestHandler> {
	const rate = new SendRate();
	return {
		[MESSAGE_REQUESTS.send]: (payload) => {
			const extra = Object.keys(payload).filter((key) => key !== "type" && !SEND_KEYS.includes(key));
			if (
				extra.some((key) => ["sender", "from", "from_name", "from_role", "sender_name", "sender_role"].includes(key))
			) {
				throw new MessageRefused(
					"agent_message.send(): the sender is filled in by the host from the sending session and cannot be set; remove that argument.",
				);
			}
			if (extra.length > 0) {
				throw new MessageRefused(
					`agent_message.send(): unknown argument${extra.length > 1 ? "s" : ""} ${extra.join(", ")}; it takes text, receiver_role and receiver_name.`,
				);
			}
			const text = payload.text;
			if (typeof text !== "string" || text.trim() === "") {
				throw new MessageRefused("agent_message.send(text): the text must be a non-empty string.");
			}
			const length = [...text].length;
			if (length > MAX_MESSAGE_CHARS) {
				throw new MessageRefused(
					`agent_message.send(): the message has ${length.toLocaleString("en-US")} characters; at most ${MAX_MESSAGE_CHARS.toLocaleString("en-US")} are allowed. Write the rest to a file and send its path.`,
				);
			}
			const role = payload.receiver_role ?? "parent";
			if (!ROLES.includes(role as FamilyRole)) {
				throw new MessageRefused(
					`agent_message.send(receiver_role=${JSON.stringify(role)}): must be "parent", "sibling" or "child" (only the family can be reached).`,
				);
			}
			const receiver = findReceiver(family, role as FamilyRole, payload.receiver_name);
			if (!receiver.mailbox) {
				throw new MessageRefused(
					`agent_message.send(): "${receiver.name}" cannot receive messages: ${receiver.why ?? "it is not running"}.`,
				);
			}
			rate.check();
			// What the sender is to the receiver.
			const fromRole: FamilyRole = role === "parent" ? "child" : role === "child" ? "parent" : "sibling";
			const mail: AgentMail = receiver.mailbox.accept({ from_role: fromRole, from_name: family.self, text });
			// Only an accepted send counts toward the rate limit (not one refused for the pending limit).
			rate.count();
			if (role === "parent") family.parent?.noteReply();
			return { id: mail.id, receiver: receiver.name, receiver_role: role };
		},
		[MESSAGE_REQUESTS.inbox]: () => ({ messages: own.inbox() }),
	};
}

function findReceiver(family: Family, role: FamilyRole, name: unknown): FamilyMember {
	if (role === "parent") {
		if (!family.parent)
			throw new MessageRefused(
				'agent_message.send(receiver_role="parent"): this agent has no parent (it is the root).',
			);
		if (name !== undefined && name !== null && name !== family.parent.name) {
			throw new MessageRefused(
				`agent_message.send(receiver_role="parent", receiver_name=${JSON.stringify(name)}): the parent is "${family.parent.name}"; leave receiver_name out or name the parent (a sibling is reached with receiver_role="sibling").`,
			);
		}
		return family.parent;
	}
	const names = role === "child" ? family.childNames() : family.siblingNames();
	if (typeof name !== "string" || name === "") {
		throw new MessageRefused(
			`agent_message.send(receiver_role="${role}"): name the receiver with receiver_name=...${names.length ? ` (${names.join(", ")})` : ` (this agent has no ${role}s)`}.`,
		);
	}
	const member = role === "child" ? family.child(name) : name === family.self ? undefined : family.sibling(name);
	if (!member) {
		throw new MessageRefused(
			`agent_message.send(): no ${role} named "${name}"${names.length ? `; ${role}s: ${names.join(", ")}` : `; this agent has no ${role}s`}. Only the parent, siblings and children can be reached.`,
		);
	}
	return member;
}
