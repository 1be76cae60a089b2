import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { WireCodec } from "./codec.js";

describe("the wire codec", () => {
	it("decodes what it encodes, with the parent header", () => {
		const codec = new WireCodec("secret");
		const parent = codec.header("execute_request");
		const frames = codec.encode(codec.header("execute_reply"), { status: "ok" }, parent);
		const message = codec.decode([Buffer.from("topic"), ...frames]);
		expect(message?.content).toEqual({ status: "ok" });
		expect(message?.parent_header.msg_id).toBe(parent.msg_id);
		expect(message?.identities.map(String)).toEqual(["topic"]);
		expect(codec.dropped).toBe(0);
	});

	it("drops and counts a message whose content was changed after signing", () => {
		const codec = new WireCodec("secret");
		const frames = codec.encode(codec.header("stream"), { name: "stdout", text: "real" });
		frames[5] = Buffer.from(JSON.stringify({ name: "stdout", text: "forged" }));
		expect(codec.decode(frames)).toBeUndefined();
		expect(codec.dropped).toBe(1);
	});

	it("drops a message signed with another key, or with no signature at all", () => {
		const other = new WireCodec("other key");
		const codec = new WireCodec("secret");
		expect(codec.decode(other.encode(other.header("status"), {}))).toBeUndefined();
		const unsigned = codec.encode(codec.header("status"), {});
		unsigned[1] = Buffer.alloc(0);
		expect(codec.decode(unsigned)).toBeUndefined();
		expect(codec.dropped).toBe(2);
	});

	it("delivers a signed message whose content is not JSON with the reason, instead of dropping it", () => {
		const codec = new WireCodec("secret");
		const header = codec.header("display_data");
		const frames = codec.encode(header, {});
		frames[5] = Buffer.from("{not json");
		frames[1] = Buffer.from(
			createHmac("sha256", "secret")
				.update(Buffer.concat(frames.slice(2)))
				.digest("hex"),
		);
		const message = codec.decode(frames);
		expect(message?.header.msg_id).toBe(header.msg_id);
		expect(message?.content).toEqual({});
		expect(message?.unreadable?.startsWith("9 bytes: ")).toBe(true);
		expect(codec.dropped).toBe(0);
	});
});
