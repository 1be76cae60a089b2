import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { parseOutcome } from "./index.js";

/** Real agent runs (mini-swe-agent on SWE-bench), in the repository's `fixtures/`. */
const TRAJECTORIES = fileURLToPath(new URL("../../../../fixtures/trajectories", import.meta.url));

interface Observation {
	file: string;
	returnCode: number;
	output: string;
}

function observations(): Observation[] {
	const found: Observation[] = [];
	for (const file of readdirSync(TRAJECTORIES).filter((name) => name.endsWith(".traj.json.gz"))) {
		const run = JSON.parse(gunzipSync(readFileSync(`${TRAJECTORIES}/${file}`)).toString("utf8")) as {
			messages: { role: string; content: unknown }[];
		};
		for (const message of run.messages) {
			if (message.role !== "user" || typeof message.content !== "string") continue;
			const code = /<returncode>(-?\d+)<\/returncode>/.exec(message.content);
			if (!code) continue;
			const output = message.content.replace(/^[\s\S]*?<output>\n?/, "").replace(/<\/output>\s*$/, "");
			found.push({ file, returnCode: Number(code[1]), output });
		}
	}
	return found;
}

describe("real agent observations", () => {
	const all = observations();

	it("never reads a command that exited non-zero as a pass, from its text alone", () => {
		expect(all.length).toBeGreaterThan(1000);
		const falseGreens = all.filter((o) => o.returnCode !== 0 && parseOutcome(o.output).status === "pass");
		expect(falseGreens.map((o) => `${o.file}: ${o.output.slice(-200)}`)).toEqual([]);
	});

	it("agrees with the recorded exit status on every observation once it is known", () => {
		const wrong = all.filter((o) => {
			const status = parseOutcome(o.output, { exitCode: o.returnCode }).status;
			return o.returnCode === 0 ? status === "fail" : status !== "fail";
		});
		expect(wrong.map((o) => `${o.file} (exit ${o.returnCode}): ${o.output.slice(0, 200)}`)).toEqual([]);
	});

	it("recognises the test runs among them", () => {
		const runners = new Set(all.map((o) => parseOutcome(o.output).runner));
		expect(runners).toContain("pytest");
		expect(runners).toContain("unittest");
	});
});
