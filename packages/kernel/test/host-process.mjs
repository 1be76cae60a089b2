// A host process for tests: starts a kernel from the built package, prints its pid, then waits.
// With --own-sigint it handles SIGINT itself (printing "sigint handled") and keeps running; the
// handler is added after the kernel's own, so it runs last. With --cell CODE it runs CODE and
// prints each line the cell prints as {"printed": line}; with --then-shutdown it then shuts the
// kernel down (without waiting) and prints "shutting down".
import { Kernel } from "../dist/index.js";

const kernel = await Kernel.start();
if (process.argv.includes("--own-sigint")) {
	process.on("SIGINT", () => process.stdout.write("sigint handled\n"));
}
process.stdout.write(`${JSON.stringify({ kernelPid: kernel.pid })}\n`);
const cell = process.argv.indexOf("--cell");
if (cell > 0) {
	const ran = kernel.execute(process.argv[cell + 1], {
		onStream: (chunk) => {
			for (const line of chunk.text.split("\n").filter(Boolean))
				process.stdout.write(`${JSON.stringify({ printed: line })}\n`);
		},
	});
	if (process.argv.includes("--then-shutdown")) {
		await ran;
		void kernel.shutdown();
		process.stdout.write("shutting down\n");
	}
}
setInterval(() => {}, 60_000);
