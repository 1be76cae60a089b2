import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, expect, it } from "vitest";
import { openSessionArchive } from "../src/archive/index.js";
import { DIST_INDEX, requireBuild } from "./cli-process.js";

const WRITER = `
const { openSessionArchive } = await import(process.argv[2]);
const archive = await openSessionArchive({ root: process.argv[3], sessionId: "shared" });
const ids = [];
for (let i = 0; i < 10; i++) {
	const writer = await archive.create();
	await writer.write(Buffer.from("process " + process.pid + " observation " + i + "\\n"));
	await writer.finish({ tool: "run", source: "visible-tool-result", decision: "pass-through", isError: false, exitCode: 0, command: null });
	ids.push(writer.id);
}
console.log(JSON.stringify(ids));
`;

let dir: string;
beforeEach(async () => {
	requireBuild();
	dir = await mkdtemp(join(tmpdir(), "pc-processes-"));
	await writeFile(join(dir, "writer.mjs"), WRITER);
});
afterEach(async () => {
	await rm(dir, { recursive: true, force: true });
});

function writer(): Promise<string[]> {
	return new Promise((resolve, reject) => {
		const child = spawn(process.execPath, [join(dir, "writer.mjs"), pathToFileURL(DIST_INDEX).href, join(dir, "root")]);
		let out = "";
		let err = "";
		child.stdout.on("data", (chunk) => (out += chunk));
		child.stderr.on("data", (chunk) => (err += chunk));
		child.on("close", (status) => (status === 0 ? resolve(JSON.parse(out)) : reject(new Error(err))));
	});
}

it("gives every observation a distinct id when several processes write one session at once", async () => {
	const results = await Promise.all([writer(), writer(), writer(), writer()]);
	const ids = results.flat();
	expect(new Set(ids).size).toBe(40);
	const archive = await openSessionArchive({ root: join(dir, "root"), sessionId: "shared" });
	const listed = (await archive.list()).map((record) => record.id);
	expect(listed).toHaveLength(40);
	expect(listed[0]).toBe("obs_000040");
	for (const id of ids) expect((await archive.readLines(id, 1, 1)).lines[0]).toMatch(/^process \d+ observation \d$/);
}, 60_000);
