import { expect, it } from "vitest";
import { Mailbox } from "./mailbox.js";
import { type Family, MESSAGE_REQUESTS, messageHostHandlers } from "./router.js";

function family(): { family: Family; parent: Mailbox; sibling: Mailbox } {
	const parent = new Mailbox("boss");
	const sibling = new Mailbox("sib");
	return {
		parent,
		sibling,
		family: {
			self: "kid",
			parent: { name: "boss", mailbox: parent, noteReply: () => {} },
			child: () => undefined,
			childNames: () => [],
			sibling: (name) => (name === "sib" ? { name, mailbox: sibling } : undefined),
			siblingNames: () => ["sib"],
		},
	};
}

async function send(handlers: ReturnType<typeof messageHostHandlers>, payload: Record<string, unknown>) {
	try {
		return await handlers[MESSAGE_REQUESTS.send]?.(payload);
	} catch (error) {
		return (error as Error).message;
	}
}

it('receiver_name with receiver_role="parent" must name the parent', async () => {
	const { family: fam, parent } = family();
	const handlers = messageHostHandlers(new Mailbox("kid"), fam);
	expect(await send(handlers, { text: "hi", receiver_role: "parent", receiver_name: "sib" })).toBe(
		'agent_message.send(receiver_role="parent", receiver_name="sib"): the parent is "boss"; leave receiver_name out or name the parent (a sibling is reached with receiver_role="sibling").',
	);
	expect(parent.pendingCount).toBe(0);
	expect(await send(handlers, { text: "hi", receiver_role: "parent", receiver_name: "boss" })).toEqual({
		id: "msg_0001",
		receiver: "boss",
		receiver_role: "parent",
	});
});

it("a send refused for the 20-pending limit does not count toward the rate limit", async () => {
	const { family: fam, sibling } = family();
	const handlers = messageHostHandlers(new Mailbox("kid"), fam);
	for (let index = 0; index < 20; index++) await send(handlers, { text: `m${index}` });
	const refused = [];
	for (let index = 0; index < 40; index++) refused.push(await send(handlers, { text: "more" }));
	expect(refused.every((text) => typeof text === "string" && text.includes("already has 20 messages"))).toBe(true);
	expect(await send(handlers, { text: "to sib", receiver_role: "sibling", receiver_name: "sib" })).toEqual({
		id: "msg_0001",
		receiver: "sib",
		receiver_role: "sibling",
	});
	expect(sibling.pendingCount).toBe(1);
});
