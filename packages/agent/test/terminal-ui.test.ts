import { expect, it } from "vitest";
import { loadTerminalUi } from "../src/modes/index.js";

it("finds the terminal UI package by name and its runInteractiveMode", async () => {
	const loaded = await loadTerminalUi();
	expect("ui" in loaded && typeof loaded.ui.runInteractiveMode).toBe("function");
});

it("a missing package, or one without runInteractiveMode, means the line chat, with the reason", async () => {
	const missing = await loadTerminalUi("prime-agent-tui-not-installed");
	expect(missing).toEqual({
		missing: expect.stringMatching(/^prime-agent-tui-not-installed could not be loaded \(Cannot find package/),
	});
	expect(await loadTerminalUi("prime-agent-context")).toEqual({
		missing: "prime-agent-context does not export runInteractiveMode",
	});
});
