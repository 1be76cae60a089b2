/**
 * One daemon connection, server side: the handshake (`handshake.ts`), then each line parsed once
 * into a request of the process's map (`requests.ts`) and given to its handler in the process's
 * table. A line that is not a request (not JSON, an unknown kind, a wrong field) is answered with an
 * error that names it, and the connection goes on; a handler's error is answered as the process
 * says (`failed`). Nothing a client sends throws out of here.
 */
import type { Socket } from "node:net";
import { type Refusals, refuseHello } from "./handshake.js";
import { LineConnection, type Reply, type RequestMap, type RequestOf, replyError, replyOk } from "./protocol.js";
import { BadRequest, type RequestParser } from "./requests.js";

/** Every kind but `hello`, each answered with its kind's data; `from`: the client that asked. */
export type Handlers<M extends RequestMap, Client> = {
	[K in Exclude<keyof M & string, "hello">]: (
		request: RequestOf<M, K> & { id: number },
		from: Client,
	) => Answer<M[K]["reply"]> | Promise<Answer<M[K]["reply"]>>;
};

/** A kind that answers with no data may return nothing. */
// biome-ignore lint/suspicious/noConfusingVoidType: the handler of such a kind is a function that returns nothing.
type Answer<T> = undefined extends T ? T | void : T;

export interface Server<M extends RequestMap, Client> {
	token: string;
	refusals: Refusals;
	parser: RequestParser<M>;
	/** A `hello` was accepted: the client it makes and the welcome's data. */
	welcome(hello: RequestOf<M, "hello">, connection: LineConnection): { client: Client; data: M["hello"]["reply"] };
	handlers: Handlers<M, Client>;
	/** A request came from a client that said hello (before it is parsed). */
	received?(client: Client): void;
	/** The reply to a request whose handler threw. */
	failed(id: number, error: Error): Reply;
	/** A connection that said a good `hello` closed. */
	closed?(client: Client): void;
}

const SAME_VERSION = "Update the client and the daemon to the same version.";

/** Serve one connection; the returned connection closes when the client goes or is refused. */
export function serve<M extends RequestMap, Client>(socket: Socket, server: Server<M, Client>): LineConnection {
	let client: { value: Client } | undefined;
	const connection = new LineConnection(socket, (line) => {
		const error = replyError(
			0,
			`A line sent to ${server.parser.who} is not a JSON object: ${line.length > 80 ? `${line.slice(0, 80)}…` : line}`,
			SAME_VERSION,
		);
		connection.send(error);
		// Before its `hello`, a peer that does not speak the protocol is not listened to further.
		if (!client) connection.close();
	});
	connection.onMessage(async (line) => {
		let request: ReturnType<RequestParser<M>["parse"]>;
		const lineId = typeof line.id === "number" ? line.id : 0;
		if (!client) {
			const refusal = refuseHello(line, lineId, server.token, server.refusals);
			if (!refusal) {
				try {
					const hello = server.parser.parse(line) as RequestOf<M, "hello"> & { id: number };
					const welcomed = server.welcome(hello, connection);
					client = { value: welcomed.client };
					connection.send(replyOk(hello.id, welcomed.data));
					return;
				} catch (error) {
					connection.send(replyError(lineId, (error as Error).message, SAME_VERSION));
				}
			} else connection.send(refusal);
			connection.close();
			return;
		}
		server.received?.(client.value);
		try {
			request = server.parser.parse(line);
		} catch (error) {
			connection.send(
				replyError(error instanceof BadRequest ? error.id : lineId, (error as Error).message, SAME_VERSION),
			);
			return;
		}
		if (request.type === "hello") {
			connection.send(replyError(request.id, "This connection has said hello already.", SAME_VERSION));
			return;
		}
		const from = client.value;
		try {
			const handler = server.handlers[request.type as Exclude<keyof M & string, "hello">];
			connection.send(replyOk(request.id, await handler(request as never, from)));
		} catch (error) {
			connection.send(server.failed(request.id, error as Error));
		}
	});
	void connection.closed.then(() => {
		if (client) server.closed?.(client.value);
	});
	return connection;
}
