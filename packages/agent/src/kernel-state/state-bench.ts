#!/usr/bin/env node
/**
 * `npm run bench:kernel-state [-- --cells N]`: the size of a session's kernel-state folder as cells
 * run. A real kernel holds three large values (about 3.5 MB pickled) and ten small ones; each of
 * N cells (default 500) changes one small one, and its snapshot is kept for its own entry, as in a
 * session. Prints the folder's size every 100 cells (and what a full copy per entry would take),
 * the number of files, and the time per cell. Asserts nothing.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionKernel } from "../tools/ipython/session-kernel.js";
import type { StateSaveOutcome } from "./state-saver.js";

const SETUP = [
	"import random",
	"random.seed(7)",
	"samples = [random.random() for _ in range(200_000)]",
	"corpus = ''.join(random.choice('abcdefgh ') for _ in range(1_000_000))",
	"index = {f'key{i}': i * 3 for i in range(40_000)}",
	"for i in range(10): globals()[f'small{i}'] = [i]",
	"del i",
].join("\n");

/** Bytes and files under `dir`. */
function footprint(dir: string): { bytes: number; files: number } {
	let bytes = 0;
	let files = 0;
	for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
		if (!entry.isFile()) continue;
		bytes += statSync(join(entry.parentPath, entry.name)).size;
		files++;
	}
	return { bytes, files };
}

const mb = (bytes: number) => `${(bytes / 1_000_000).toFixed(1)} MB`;

async function main(): Promise<void> {
	const at = process.argv.indexOf("--cells");
	const cells = at > 0 ? Number(process.argv[at + 1]) : 500;
	const root = mkdtempSync(join(tmpdir(), "prime-state-bench-"));
	const dir = join(root, "kernel-state");
	let last: StateSaveOutcome | undefined;
	const kernel = new SessionKernel({
		cwd: root,
		outputDir: join(root, "outputs"),
		// Each cell's id is its entry, as the session's entry of its result would be.
		state: { dir, entryOf: (cellId) => cellId, onSaved: (outcome) => (last = outcome) },
	});
	try {
		await kernel.run(SETUP, undefined, undefined, "setup");
		const began = Date.now();
		for (let n = 1; n <= cells; n++) {
			const run = await kernel.run(`small${n % 10} = [${n}] * 20`, undefined, undefined, `cell${n}`);
			if (run.cell.status !== "ok") throw new Error(`cell ${n} failed: ${run.cell.error?.evalue}`);
			if (n % 100 === 0 || n === cells) {
				// The snapshot of cell n is written before the next cell (or here, by the flush).
				if (n === cells) await kernel.dispose();
				if (last && !last.ok) throw last.error;
				const snapshot = last?.ok ? last.report.totalBytes : 0;
				const { bytes, files } = footprint(dir);
				const kept = readdirSync(join(dir, "entries")).filter((name) => name.endsWith(".json")).length;
				console.log(
					`after ${n} cells: folder ${mb(bytes)} in ${files} files, ${kept} entries kept; one snapshot ${mb(snapshot)}, a full copy per entry would be ${mb(snapshot * kept)}`,
				);
			}
		}
		console.log(`${((Date.now() - began) / cells).toFixed(1)} ms per cell, its save included`);
	} finally {
		await kernel.dispose();
		rmSync(root, { recursive: true, force: true });
	}
}

await main();
