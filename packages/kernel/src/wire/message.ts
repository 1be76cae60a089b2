import { randomUUID } from "node:crypto";

/** Jupyter messaging protocol, version 5.3: the parts of a message as they travel on the wire. */

export const PROTOCOL_VERSION = "5.3";
/** Separates routing identities from the signed parts of a message. */
export const DELIMITER = "<IDS|MSG>";

export interface MessageHeader {
	msg_id: string;
	msg_type: string;
	session: string;
	username: string;
	date: string;
	version: string;
	[key: string]: unknown;
}

/** A fresh header of a message this host sends in `session`. */
export function messageHeader(msgType: string, session: string, username: string): MessageHeader {
	return {
		msg_id: randomUUID(),
		msg_type: msgType,
		session,
		username,
		date: new Date().toISOString(),
		version: PROTOCOL_VERSION,
	};
}

export interface JupyterMessage<Content = Record<string, unknown>> {
	/** Routing frames before the delimiter (the topic on iopub). */
	identities: Buffer[];
	header: MessageHeader;
	/** The header of the request this message answers; `{}` when none. */
	parent_header: Partial<MessageHeader>;
	metadata: Record<string, unknown>;
	content: Content;
	buffers: Buffer[];
	/**
	 * Set when the signed content could not be decoded (more than a JavaScript string holds, or not
	 * JSON): its size and the reason. `content` is then `{}`; the message is still delivered, so
	 * the cell it belongs to can say what is missing.
	 */
	unreadable?: string;
}
