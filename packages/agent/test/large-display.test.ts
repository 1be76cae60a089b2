import { readFileSync } from "node:fs";
import { type Context, fauxAssistantMessage } from "@mariozechner/pi-ai";
import { useFauxSessions } from "prime-agent-test-support/faux-session";
import { expect, it } from "vitest";
import { cell, lastToolResult } from "./agent-scripts.js";

const sessions = useFauxSessions();

it("names the file a display too large to show was saved to, and keeps the print after it", async () => {
	let seen: Context | undefined;
	sessions.faux.setResponses([
		cell(
			"from IPython.display import Image, display\npng = b'\\x89PNG\\r\\n\\x1a\\n' + bytes(range(256)) * 4_000\ndisplay(Image(data=png))\nprint('after')",
		),
		(context) => {
			seen = context;
			return fauxAssistantMessage("Shown.");
		},
	]);
	const started = await sessions.start();
	expect((await started.agentSession.prompt("show the image")).status).toBe("ok");
	const text = lastToolResult(seen);
	const line = /^\[a display's image\/png \(1024008 bytes\) was too large to show; saved to (\S+\.png)\]$/m.exec(text);
	expect(text.startsWith("after\n")).toBe(true);
	expect(readFileSync(line?.[1] as string).length).toBe(1_024_008);
});
