import type { HostRequestHandler } from "../types.js";

/** Target name of the comm a kernel opens to make a host request. */
export const HOST_REQUEST_TARGET = "host.request";

export type HostReply = { status: "ok"; [field: string]: unknown } | { status: "error"; error: string };

/**
 * Handlers for host requests, keyed by request type. `answer` always settles with a reply: an
 * unknown type or a throwing handler becomes `{status:"error", error}`, so Python never hangs.
 */
export class HostRequestRegistry {
	private readonly handlers = new Map<string, HostRequestHandler>();

	/** `timeoutMs`: how long a handler may take before the reply is an error saying so (0: no limit). */
	constructor(private readonly timeoutMs = 0) {}

	/** Registers `handler` for `type` (replacing any other); returns the function that unregisters it. */
	register(type: string, handler: HostRequestHandler): () => void {
		this.handlers.set(type, handler);
		return () => {
			if (this.handlers.get(type) === handler) this.handlers.delete(type);
		};
	}

	/** The reply to the data of a `host.request` comm (`{...payload, type}`). */
	async answer(data: unknown): Promise<HostReply> {
		if (!data || typeof data !== "object" || Array.isArray(data)) {
			return { status: "error", error: "host request data must be an object with a string `type`" };
		}
		const { type, ...payload } = data as Record<string, unknown>;
		if (typeof type !== "string") {
			return { status: "error", error: "host request has no string `type`; call host_request(type, payload)" };
		}
		const handler = this.handlers.get(type);
		if (!handler) {
			const known = [...this.handlers.keys()].sort();
			return {
				status: "error",
				error: `no host handler for request type "${type}" (known types: ${known.length > 0 ? known.join(", ") : "none"})`,
			};
		}
		let timer: NodeJS.Timeout | undefined;
		const expired = new Promise<HostReply>((resolve) => {
			if (this.timeoutMs <= 0) return;
			timer = setTimeout(
				() =>
					resolve({
						status: "error",
						error: `the host's handler for "${type}" did not answer within ${this.timeoutMs / 1000} s (hostRequestTimeoutMs)`,
					}),
				this.timeoutMs,
			);
			timer.unref();
		});
		const answered = (async (): Promise<HostReply> => {
			try {
				return toOkReply(await handler(payload));
			} catch (error) {
				return { status: "error", error: error instanceof Error ? error.message : String(error) };
			}
		})();
		try {
			return await Promise.race([answered, expired]);
		} finally {
			clearTimeout(timer);
		}
	}
}

/** An object result becomes the reply's fields; `undefined`/`null` an empty reply; anything else `{value}`. */
function toOkReply(result: unknown): HostReply {
	if (result === undefined || result === null) return { status: "ok" };
	if (typeof result === "object" && !Array.isArray(result))
		return { ...(result as Record<string, unknown>), status: "ok" };
	return { status: "ok", value: result };
}
