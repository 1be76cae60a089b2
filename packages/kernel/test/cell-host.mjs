// A host process for tests: starts a kernel from the built package, runs the cells given as
// arguments one after another, prints "first output" when the first stream chunk arrives (so a
// test can pause this process mid-cell), then one JSON line per cell describing its result.
import { openSync, readSync, statSync } from "node:fs";
import { Kernel } from "../dist/index.js";

const kernel = await Kernel.start();
let firstSeen = false;
for (const code of process.argv.slice(2)) {
	let receivedChars = 0;
	const result = await kernel.execute(code, {
		onStream: (chunk) => {
			if (!firstSeen) process.stdout.write("first output\n");
			firstSeen = true;
			receivedChars += chunk.text.length;
		},
	});
	let fileTail = "";
	if (result.fullOutputPath) {
		const size = statSync(result.fullOutputPath).size;
		const buffer = Buffer.alloc(Math.min(size, 300));
		readSync(openSync(result.fullOutputPath, "r"), buffer, 0, buffer.length, size - buffer.length);
		fileTail = buffer.toString("utf8");
	}
	const { status, fullOutputBytes, lostOutputChars, stderr } = result;
	process.stdout.write(
		`${JSON.stringify({ status, fullOutputBytes, lostOutputChars, receivedChars, stderr, fileTail })}\n`,
	);
}
await kernel.shutdown();
