/**
 * The first exchange on every daemon connection, both sides: the client says `hello` with the
 * per-user token and the protocol version; the server (supervisor or worker) refuses anything else,
 * a wrong token, or another version, with an error that says what to do, and closes.
 */
import { timingSafeEqual } from "node:crypto";
import {
	DAEMON_PROTOCOL_VERSION,
	type ProtocolClient,
	type Reply,
	type ReplyError,
	type RequestMap,
	type RequestOf,
	replyError,
} from "./protocol.js";
import type { Hello } from "./requests.js";

/** What a server says when it refuses a connection's first line. */
export interface Refusals {
	/** Not a `hello`, or a wrong token. */
	wrongToken: { message: string; hint: string };
	/** Another protocol version (`theirs`: what the client said). */
	wrongVersion(theirs: unknown): { message: string; hint: string };
}

export const SUPERVISOR_REFUSALS: Refusals = {
	wrongToken: {
		message: "Wrong or missing token: this daemon belongs to another user.",
		hint: "Use your own agent home (PRIME_AGENT_DIR).",
	},
	// A client of another build reads the versions from these words (see `versionMismatch`).
	wrongVersion: (theirs) => ({
		message: `The daemon speaks protocol ${DAEMON_PROTOCOL_VERSION}, the client ${String(theirs)}.`,
		hint: "Run `prime-agent shutdown` to stop the old daemon, then try again.",
	}),
};

export const WORKER_REFUSALS: Refusals = {
	wrongToken: {
		message: "Wrong or missing token: this worker belongs to another user or daemon.",
		hint: "Connect with `prime-agent attach <agent>`.",
	},
	wrongVersion: (theirs) => ({
		message: `Protocol ${String(theirs)} is not this worker's ${DAEMON_PROTOCOL_VERSION}.`,
		hint: "Run `prime-agent shutdown` and start again with one version.",
	}),
};

/** Server side: why a connection's first line is refused, or undefined when it is a good `hello`. */
export function refuseHello(
	line: Record<string, unknown>,
	id: number,
	token: string,
	refusals: Refusals,
): ReplyError | undefined {
	if (line.type !== "hello" || typeof line.token !== "string" || !sameToken(line.token, token))
		return replyError(id, refusals.wrongToken.message, refusals.wrongToken.hint);
	if (line.version !== DAEMON_PROTOCOL_VERSION) {
		const refusal = refusals.wrongVersion(line.version);
		return replyError(id, refusal.message, refusal.hint);
	}
	return undefined;
}

/** Compared in constant time: how long a refusal takes says nothing about the token. */
function sameToken(given: string, token: string): boolean {
	const a = Buffer.from(given);
	const b = Buffer.from(token);
	return a.length === b.length && timingSafeEqual(a, b);
}

/** A process whose connections open with `hello`. */
type Greeted = RequestMap & { hello: { request: Hello; reply: unknown } };

/** Client side: say `hello` (with what else the process asks); the reply is the server's welcome or refusal. */
export function sayHello<M extends Greeted>(
	client: ProtocolClient<M>,
	token: string,
	extra: Omit<M["hello"]["request"], keyof Hello>,
	timeoutMs?: number,
): Promise<Reply<M["hello"]["reply"]>> {
	const hello = { type: "hello", token, version: DAEMON_PROTOCOL_VERSION, ...extra };
	return client.request(hello as RequestOf<M, "hello">, timeoutMs);
}
