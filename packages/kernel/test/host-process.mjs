// A host process for tests: starts a kernel from the built package, prints its pid, then waits.
import { Kernel } from "../dist/index.js";

const kernel = await Kernel.start();
process.stdout.write(`${JSON.stringify({ kernelPid: kernel.pid })}\n`);
setInterval(() => {}, 60_000);
