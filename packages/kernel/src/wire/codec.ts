import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import { DELIMITER, type JupyterMessage, type MessageHeader, messageHeader } from "./message.js";

const EMPTY = Buffer.alloc(0);

/**
 * Encodes and decodes signed Jupyter messages. Every decoded message had a valid HMAC-SHA256
 * signature (checked in constant time); anything else decodes to `undefined` and is counted in
 * `dropped`, so a forged or corrupted message never reaches the caller.
 */
export class WireCodec {
	/** Incoming messages rejected for a missing or wrong signature, or a malformed frame. */
	dropped = 0;
	private readonly key: Buffer;

	constructor(
		key: string,
		readonly session: string = randomUUID(),
		readonly username: string = "prime-agent",
	) {
		this.key = Buffer.from(key, "utf8");
	}

	header(msgType: string): MessageHeader {
		return messageHeader(msgType, this.session, this.username);
	}

	/** Frames for `msgType` with `content`, signed; `parent` makes it a reply to that message. */
	encode(
		header: MessageHeader,
		content: Record<string, unknown>,
		parent: Partial<MessageHeader> = {},
		metadata: Record<string, unknown> = {},
	): Buffer[] {
		const parts = [header, parent, metadata, content].map((part) => Buffer.from(JSON.stringify(part), "utf8"));
		const signature = Buffer.from(this.sign(parts), "ascii");
		return [Buffer.from(DELIMITER, "ascii"), signature, ...parts];
	}

	/** The message carried by `frames`, or `undefined` (and `dropped` counted) if it fails verification. */
	decode(frames: Buffer[]): JupyterMessage | undefined {
		const at = frames.findIndex((frame) => frame.length === DELIMITER.length && frame.toString("ascii") === DELIMITER);
		if (at < 0 || frames.length < at + 6) return this.drop();
		const signature = frames[at + 1];
		const parts = frames.slice(at + 2, at + 6);
		const expected = Buffer.from(this.sign(parts), "ascii");
		if (signature.length !== expected.length || !timingSafeEqual(signature, expected)) return this.drop();
		let header: MessageHeader | undefined;
		let parent: Partial<MessageHeader> | undefined;
		let metadata: Record<string, unknown> | undefined;
		try {
			[header, parent, metadata] = parts.slice(0, 3).map((part) => JSON.parse(part.toString("utf8")));
		} catch {
			return this.drop();
		}
		if (!header || typeof header.msg_type !== "string") return this.drop();
		const message: JupyterMessage = {
			identities: frames.slice(0, at),
			header,
			parent_header: parent ?? {},
			metadata: metadata ?? {},
			content: {},
			buffers: frames.slice(at + 6),
		};
		try {
			message.content = JSON.parse(parts[3].toString("utf8")) ?? {};
		} catch (error) {
			message.unreadable = `${parts[3].length} bytes: ${error instanceof Error ? error.message : String(error)}`;
		}
		return message;
	}

	private sign(parts: Buffer[]): string {
		const hmac = createHmac("sha256", this.key);
		for (const part of parts) hmac.update(part ?? EMPTY);
		return hmac.digest("hex");
	}

	private drop(): undefined {
		this.dropped++;
		return undefined;
	}
}
