// A host process for tests: starts a kernel from the built package, prints its pid, then waits.
// With --own-sigint it handles SIGINT itself (printing "sigint handled") and keeps running; the
// handler is added after the kernel's own, so it runs last.
import { Kernel } from "../dist/index.js";

const kernel = await Kernel.start();
if (process.argv.includes("--own-sigint")) {
	process.on("SIGINT", () => process.stdout.write("sigint handled\n"));
}
process.stdout.write(`${JSON.stringify({ kernelPid: kernel.pid })}\n`);
setInterval(() => {}, 60_000);
