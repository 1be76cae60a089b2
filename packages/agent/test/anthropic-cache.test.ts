import { anthropicModelWorld, type LoopbackServer } from "prime-agent-test-support/loopback-servers";
import type { TempWorld } from "prime-agent-test-support/temp-home";
import { afterEach, expect, it } from "vitest";
import { runCli } from "../src/cli/index.js";
import { memoryIo } from "./cli-io.js";
import { anthropicBodyGrowth } from "./prompt-growth.js";

let world: TempWorld | undefined;
let server: LoopbackServer | undefined;
afterEach(async () => {
	await server?.close();
	world?.cleanup();
});

type WireMessage = { role: string; content: unknown };

/** Indexes of the messages of one request body that carry a `cache_control` mark. */
function markedMessages(body: Record<string, unknown>): number[] {
	const messages = body.messages as WireMessage[];
	return messages.flatMap((message, index) => (JSON.stringify(message).includes('"cache_control"') ? [index] : []));
}

function marks(body: Record<string, unknown>): number {
	return JSON.stringify(body).split('"cache_control"').length - 1;
}

it("with Prime Context's task snapshot last, each Anthropic request marks the end of its history for the cache, which the next request repeats", {
	timeout: 120_000,
}, async () => {
	({ world, server } = await anthropicModelWorld([
		{ code: "print(await prime_context.update(focus='fix the bug', add=['read code', 'patch']))" },
		{ code: "x = 41" },
		{ code: "print(x + 1)" },
		{ text: "done: 42" },
	]));
	const io = memoryIo(world.project, world.env);
	expect(await runCli(["-p", "fix the bug", "--model", "proxy/claude-loopback"], io)).toBe(0);
	expect(io.out()).toBe("done: 42\n");

	const bodies = server.requests;
	expect(bodies).toHaveLength(4);
	const lastText = (body: Record<string, unknown>) =>
		((body.messages as WireMessage[]).at(-1)?.content as { text?: string }[] | undefined)?.[0]?.text ?? "";
	// From the second request on, the snapshot is the last message: the history ends one before it.
	for (const body of bodies.slice(1)) expect(lastText(body).startsWith("<prime_context_task>")).toBe(true);
	expect(bodies.map(markedMessages)).toEqual([[0], [2, 3], [4, 5], [6, 7]]);
	// The system prompt, the last tool and two messages: Anthropic's limit.
	expect(bodies.map(marks)).toEqual([3, 4, 4, 4]);
	expect(anthropicBodyGrowth(bodies)).toEqual({
		systemPromptChanges: [],
		rewrites: [],
		snapshotChanges: [],
		ageings: [],
	});
});
