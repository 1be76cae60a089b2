import { validateToolArguments } from "@mariozechner/pi-ai";
import { describe, expect, it } from "vitest";
import { createPrimeContextTool } from "./tool.js";

const tool = createPrimeContextTool(async () => {
	throw new Error("not called: only the arguments are validated");
});

function validationError(args: Record<string, unknown>): string {
	try {
		validateToolArguments(tool, { type: "toolCall", id: "call_1", name: tool.name, arguments: args });
	} catch (error) {
		return (error as Error).message;
	}
	return "";
}

describe("prime_context tool parameters", () => {
	it("accept every documented action", () => {
		for (const action of ["list", "read", "search", "status", "update"]) {
			expect(validationError({ action })).toBe("");
		}
	});

	it("reject an unknown action with one line naming the field, not one line per allowed value", () => {
		const message = validationError({ action: "frob" });
		const problems = message.split("\n").filter((line) => line.startsWith("  - "));
		expect(problems).toEqual(["  - action: must be equal to one of the allowed values"]);
	});

	it("tell the model the allowed actions in the schema itself", () => {
		expect(JSON.stringify(tool.parameters)).toContain('"enum":["list","read","search","status","update"]');
	});
});
