// A host process for tests: starts a kernel from the built package, runs the cell given as the
// first argument, prints "first output" when its first stream chunk arrives (so a test can pause
// this process mid-cell), then one JSON line describing the result, and exits.
import { openSync, readSync, statSync } from "node:fs";
import { Kernel } from "../dist/index.js";

const kernel = await Kernel.start();
let receivedChars = 0;
const result = await kernel.execute(process.argv[2], {
	onStream: (chunk) => {
		if (receivedChars === 0) process.stdout.write("first output\n");
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
await kernel.shutdown();
