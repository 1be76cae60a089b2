import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { useFauxSessions } from "prime-agent-test-support/faux-session";
import { expect, it } from "vitest";
import type { CompactionEntry } from "../src/session/index.js";
import type { IpythonDetails } from "../src/tools/index.js";

const sessions = useFauxSessions();

it("files written by %%bash and by Python with computed paths are tracked and listed as modified by compaction", async () => {
	sessions.world.writeHome("settings.json", { compaction: { keepRecentTokens: 1 } });
	sessions.world.writeProject("already.txt", "old\n");
	const cell = (code: string) => fauxAssistantMessage(fauxToolCall("ipython", { code }));
	sessions.faux.setResponses([
		cell("%%bash\necho hi > from_bash.txt\nmkdir -p sub && echo x > sub/deep.txt"),
		cell('name = "from" + "_python.txt"\nwith open(name, "w") as handle:\n    handle.write("y")'),
		cell("print(open('already.txt').read())"),
		fauxAssistantMessage("written"),
		fauxAssistantMessage("## Goal\nWrite files."),
	]);
	const started = await sessions.start();
	expect((await started.agentSession.prompt("write some files")).status).toBe("ok");
	const written = started.session
		.branch()
		.flatMap((entry) => (entry.type === "message" && entry.message.role === "toolResult" ? [entry.message] : []))
		.map((message) => (message.details as IpythonDetails).writtenFiles);
	expect(written).toEqual([["from_bash.txt", "sub/deep.txt"], ["from_python.txt"], []]);

	const command = await started.agentSession.prompt("/compact");
	expect(command.command?.message).toMatch(/^Compacted/);
	const compaction = started.session.branch().find((entry) => entry.type === "compaction") as CompactionEntry;
	expect(compaction.summary).toContain(
		"<modified-files>\nfrom_bash.txt\nfrom_python.txt\nsub/deep.txt\n</modified-files>",
	);
	expect(compaction.summary).toContain("<read-files>\nalready.txt\n</read-files>");
});
