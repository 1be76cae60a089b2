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

export interface JupyterMessage<Content = Record<string, unknown>> {
	/** Routing frames before the delimiter (the topic on iopub). */
	identities: Buffer[];
	header: MessageHeader;
	/** The header of the request this message answers; `{}` when none. */
	parent_header: Partial<MessageHeader>;
	metadata: Record<string, unknown>;
	content: Content;
	buffers: Buffer[];
}
