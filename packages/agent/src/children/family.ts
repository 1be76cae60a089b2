import type { AgentEvent } from "@mariozechner/pi-agent-core";
import type { Usage } from "@mariozechner/pi-ai";
import type { HostRequestHandler } from "prime-agent-kernel";
import type { Emitter } from "../emitter.js";
import { UserError } from "../errors.js";
import { AGENT_MESSAGE_TYPE, type Family, Mailbox, messageHostHandlers } from "../messages/index.js";
import type { ModelRegistry } from "../providers/index.js";
import { rlmHostHandlers } from "./host-handlers.js";
import { ChildManager, type ParentLink } from "./manager.js";
import { SpawnRefused } from "./options.js";
import type { ChildEvent, ChildLaunchSpec, ChildRuntime } from "./types.js";
import { CHILD_USAGE_ENTRY, type ChildUsageData } from "./usage.js";

/** A sub-agent's parent as the sub-agent sees it: its name, its mailbox, its children (the sub-agent's siblings). */
export interface ParentFamily {
	name: string;
	mailbox: Mailbox;
	children: ChildManager;
}

/** What one session brings to its family: everything `wireFamily` reads or registers with. */
export interface FamilyOptions {
	/** The session's name in its family: `root`, or the sub-agent's own. */
	self: string;
	/** Depth of the session (the root is 0), and the deepest a sub-agent may go. */
	depth: number;
	maxDepth: number;
	/** The session's own mailbox, when it has one already (a sub-agent's is made at its admission). */
	mailbox?: Mailbox;
	/** A sub-agent's parent; none for the root. */
	parent?: ParentFamily;
	/** The session as its children's parent. `appendCustom` also reports each child usage entry to `usage`. */
	session: ParentLink;
	/** `provider/id` of the session's current model (a sub-agent's default). */
	model(): string;
	/** `provider/id` of the model `ref` names when it can be used; else a `UserError` saying why. */
	checkModel(ref: string): string;
	/** The models `rlm.find_models()` lists, and whether a provider has a key. */
	models: { registry: ModelRegistry; available(provider: string): boolean };
	/** Start a sub-agent's session; `parent` is this session's side of the family. */
	launch(spec: ChildLaunchSpec, parent: ParentFamily): Promise<ChildRuntime>;
	/** The harness's sub-agent spec `name` (`rlm(spec=name)`). */
	resolveSpec(name: string): string;
	/** How long a finished sub-agent stays in memory (the registry's default without it). */
	idleEvictMs?: number;
	/** Where the kernel's `rlm` and `agent_message` requests are answered. */
	kernel: { onHostRequest(type: string, handler: HostRequestHandler): void };
	/** The session's loop events: a delivered agent message is marked so in the mailbox. */
	subscribe(listener: (event: AgentEvent) => void): unknown;
	/** Hears the progress of the session's own sub-agents. */
	events: Emitter<ChildEvent>;
	/** Hears the usage recorded for a sub-agent, as its entry is appended. */
	usage: Emitter<Usage>;
}

/**
 * Wire a session into its family: its sub-agent registry (`rlm`), its mailbox (messages reach the
 * session as delivered messages) and who it may write to (`agent_message`), both answered in its
 * kernel.
 */
export function wireFamily(options: FamilyOptions): { children: ChildManager; mailbox: Mailbox } {
	const { self, session } = options;
	const mailbox = options.mailbox ?? new Mailbox(self);
	const children: ChildManager = new ChildManager({
		parent: {
			sessionFile: session.sessionFile,
			artifactDir: session.artifactDir,
			leafId: () => session.leafId(),
			deliver: (message) => session.deliver(message),
			appendCustom: (customType, data) => {
				session.appendCustom(customType, data);
				// A child's usage is part of this session's, as its own parent sees it.
				if (customType === CHILD_USAGE_ENTRY) options.usage.emit((data as ChildUsageData).usage);
			},
		},
		depth: options.depth,
		maxDepth: options.maxDepth,
		parentModel: options.model,
		checkModel: (ref) => {
			try {
				return options.checkModel(ref);
			} catch (error) {
				if (!(error instanceof UserError)) throw error;
				throw new SpawnRefused(
					`rlm(model=${JSON.stringify(ref)}): ${error.message} No other model is used in its place; pick an available one from await rlm.find_models("query").`,
				);
			}
		},
		// Called only once the registry exists: its children are each other's siblings.
		launch: (spec) => options.launch(spec, { name: self, mailbox, children }),
		onEvent: (event) => options.events.emit(event),
		resolveSpec: options.resolveSpec,
		idleEvictMs: options.idleEvictMs,
	});
	for (const [type, handler] of Object.entries(rlmHostHandlers(children, options.models)))
		options.kernel.onHostRequest(type, handler);
	mailbox.attach((message) => session.deliver(message));
	options.subscribe((event) => {
		if (event.type !== "message_end" || event.message.role !== "host") return;
		const details = event.message.details as { id?: unknown } | undefined;
		if (event.message.customType === AGENT_MESSAGE_TYPE && typeof details?.id === "string")
			mailbox.delivered(details.id);
	});
	const parent = options.parent;
	const family: Family = {
		self,
		parent: parent && {
			name: parent.name,
			mailbox: parent.mailbox,
			noteReply: () => parent.children.noteReply(self),
		},
		child: (name) => children.receiver(name),
		childNames: () => children.names(),
		sibling: (name) => parent?.children.receiver(name),
		siblingNames: () => parent?.children.names().filter((name) => name !== self) ?? [],
	};
	for (const [type, handler] of Object.entries(messageHostHandlers(mailbox, family)))
		options.kernel.onHostRequest(type, handler);
	return { children, mailbox };
}
