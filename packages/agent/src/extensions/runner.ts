import type { AgentTool } from "@mariozechner/pi-agent-core";
import type { Api, Model } from "@mariozechner/pi-ai";
import type { HostRequestHandler } from "prime-agent-kernel";
import { childEnvironment } from "../child-env/index.js";
import type { SessionEntry } from "../session/index.js";
import type {
	ContextUsage,
	Delivery,
	ExtensionAPI,
	ExtensionEventName,
	ExtensionEvents,
	ExtensionFactory,
	ExtensionProblem,
	HiddenMessage,
	KernelStartupOptions,
	SlashCommand,
} from "./types.js";

/** What the running session offers extensions; the agent session implements it. */
export interface ExtensionHost {
	appendEntry(customType: string, data: unknown): string;
	keepSession(): void;
	sendMessage(message: HiddenMessage, deliverAs?: Delivery): void;
	getBranch(): readonly SessionEntry[];
	getModel(): Model<Api>;
	getContextUsage(): ContextUsage;
	requestCompaction(customInstructions?: string): void;
	onHostRequest(type: string, handler: HostRequestHandler): () => void;
	addKernelStartup(code: string, options?: KernelStartupOptions): void;
}

/** Handlers are stored untyped; `on` and `emit` keep each event's types paired. */
type AnyHandler = (event: unknown) => unknown;

interface Registered<T> {
	path: string;
	value: T;
}

/**
 * The loaded extensions of one session: their handlers, tools and commands, and the one place
 * events are dispatched. A handler that throws is reported as a problem and the session goes on.
 */
export class ExtensionRunner {
	private readonly handlers = new Map<ExtensionEventName, Registered<AnyHandler>[]>();
	private readonly toolList: Registered<AgentTool>[] = [];
	private readonly commandMap = new Map<string, Registered<SlashCommand>>();
	private readonly problemListeners = new Set<(problem: ExtensionProblem) => void>();
	private host: ExtensionHost | undefined;
	/** Kernel hooks asked for while loading, applied when the session binds. */
	private readonly kernelHooks: ((host: ExtensionHost) => void)[] = [];
	/** Every problem so far (load failures and handler errors), oldest first. */
	readonly problems: ExtensionProblem[] = [];
	/** Paths of the extensions that loaded. */
	readonly loaded: string[] = [];
	private readonly childEnv: Record<string, string>;

	constructor(
		readonly cwd: string,
		private readonly environment: {
			agentHome?: string;
			env?: NodeJS.ProcessEnv;
			childEnv?: Record<string, string>;
		} = {},
	) {
		this.childEnv = environment.childEnv ?? childEnvironment(environment.env ?? process.env).env;
	}

	/** Run an extension's factory. A factory that throws is reported and its registrations dropped. */
	async load(path: string, factory: ExtensionFactory): Promise<boolean> {
		const pending = { handlers: [] as [ExtensionEventName, AnyHandler][], tools: [] as AgentTool[] };
		const commands: [string, SlashCommand][] = [];
		const api: ExtensionAPI = {
			cwd: this.cwd,
			agentHome: this.environment.agentHome ?? "",
			env: this.environment.env ?? process.env,
			childEnv: this.childEnv,
			on: (event, handler) => {
				pending.handlers.push([event, handler as AnyHandler]);
			},
			registerTool: (tool) => {
				pending.tools.push(tool);
			},
			registerCommand: (name, command) => {
				commands.push([name.replace(/^\//, ""), command]);
			},
			appendEntry: (customType, data) => this.requireHost("appendEntry").appendEntry(customType, data),
			keepSession: () => this.requireHost("keepSession").keepSession(),
			sendMessage: (message, options) => this.requireHost("sendMessage").sendMessage(message, options?.deliverAs),
			getBranch: () => this.requireHost("getBranch").getBranch(),
			getModel: () => this.requireHost("getModel").getModel(),
			getContextUsage: () => this.requireHost("getContextUsage").getContextUsage(),
			compact: (options) => this.requireHost("compact").requestCompaction(options?.customInstructions),
			warn: (message) => this.report({ path, phase: "warning", message }),
			onHostRequest: (type, handler) => {
				let unregister: (() => void) | undefined;
				let dropped = false;
				this.withHost((host) => {
					if (!dropped) unregister = host.onHostRequest(type, handler);
				});
				return () => {
					dropped = true;
					unregister?.();
				};
			},
			addKernelStartup: (code, options) => this.withHost((host) => host.addKernelStartup(code, options)),
		};
		try {
			await factory(api);
		} catch (error) {
			this.report({ path, phase: "load", message: errorText(error) });
			return false;
		}
		for (const [event, handler] of pending.handlers) {
			const list = this.handlers.get(event) ?? [];
			list.push({ path, value: handler });
			this.handlers.set(event, list);
		}
		for (const tool of pending.tools) this.toolList.push({ path, value: tool });
		for (const [name, command] of commands) this.commandMap.set(name, { path, value: command });
		this.loaded.push(path);
		return true;
	}

	/** Connect the running session; calls that touch the session work from then on. */
	bind(host: ExtensionHost): void {
		this.host = host;
		for (const hook of this.kernelHooks.splice(0)) hook(host);
	}

	/** Run `hook` now when a session is bound, else when it binds. */
	private withHost(hook: (host: ExtensionHost) => void): void {
		if (this.host) hook(this.host);
		else this.kernelHooks.push(hook);
	}

	report(problem: ExtensionProblem): void {
		this.problems.push(problem);
		for (const listener of this.problemListeners) listener(problem);
	}

	/** Hear about load failures, handler errors and warnings as they happen. */
	onProblem(listener: (problem: ExtensionProblem) => void): () => void {
		this.problemListeners.add(listener);
		return () => this.problemListeners.delete(listener);
	}

	get tools(): AgentTool[] {
		return this.toolList.map((entry) => entry.value);
	}

	/** Path of the extension that registered `tool`. */
	toolPath(tool: AgentTool): string | undefined {
		return this.toolList.find((entry) => entry.value === tool)?.path;
	}

	command(name: string): SlashCommand | undefined {
		return this.commandMap.get(name)?.value;
	}

	get commandNames(): string[] {
		return [...this.commandMap.keys()].sort();
	}

	has(event: ExtensionEventName): boolean {
		return (this.handlers.get(event)?.length ?? 0) > 0;
	}

	/**
	 * Run every handler of `event` in load order. `fold` sees each handler's result as it comes
	 * and returns the next event (for chained hooks) or `stop` to end the dispatch.
	 */
	async emit<K extends ExtensionEventName>(
		event: K,
		payload: ExtensionEvents[K]["event"],
		fold?: (
			result: ExtensionEvents[K]["result"],
			payload: ExtensionEvents[K]["event"],
		) => ExtensionEvents[K]["event"] | "stop",
	): Promise<ExtensionEvents[K]["event"]> {
		let current = payload;
		for (const { path, value } of this.handlers.get(event) ?? []) {
			let result: ExtensionEvents[K]["result"];
			try {
				result = (await value(current)) as ExtensionEvents[K]["result"];
			} catch (error) {
				this.report({ path, phase: event, message: errorText(error) });
				continue;
			}
			if (!fold) continue;
			const next = fold(result, current);
			if (next === "stop") break;
			current = next;
		}
		return current;
	}

	/**
	 * `tool_call`: the first handler that blocks wins; a handler that throws blocks too, since
	 * letting a call through that a guard could not judge is the unsafe choice.
	 */
	async toolCall(payload: ExtensionEvents["tool_call"]["event"]): Promise<{ block: true; reason: string } | undefined> {
		for (const { path, value } of this.handlers.get("tool_call") ?? []) {
			try {
				const result = (await value(payload)) as ExtensionEvents["tool_call"]["result"];
				if (result?.block) return { block: true, reason: result.reason ?? `Blocked by the extension ${path}.` };
			} catch (error) {
				const message = errorText(error);
				this.report({ path, phase: "tool_call", message });
				return {
					block: true,
					reason: `The extension ${path} failed while checking this call (${message}); it was not run.`,
				};
			}
		}
		return undefined;
	}

	private requireHost(call: string): ExtensionHost {
		if (!this.host) {
			throw new Error(`${call}() is not available while extensions load; call it from an event handler or a command.`);
		}
		return this.host;
	}
}

function errorText(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}
