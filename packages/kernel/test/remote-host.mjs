// A host process for tests: starts a kernel on the Jupyter Server at PRIME_TEST_SERVER_URL (token in
// JUPYTER_TOKEN; the kernel ends itself PRIME_TEST_HOST_GONE_MS after this host stops beating), prints
// {"kernelId", "pid"} (the kernel's pid on the server's machine), then waits to be killed.
import { Kernel } from "../dist/index.js";

const kernel = await Kernel.start({
	jupyterServer: {
		url: process.env.PRIME_TEST_SERVER_URL,
		token: process.env.JUPYTER_TOKEN,
		hostGoneAfterMs: Number(process.env.PRIME_TEST_HOST_GONE_MS),
		kernelName: process.env.PRIME_TEST_KERNEL_NAME || undefined,
	},
});
const cell = await kernel.execute(
	"import os, subprocess\nchild = subprocess.Popen(['sleep', '600'])\nprint(os.getpid(), child.pid)",
);
const [pid, childPid] = cell.stdout.trim().split(" ").map(Number);
process.stdout.write(`${JSON.stringify({ kernelId: kernel.location.kernelId, pid, childPid })}\n`);
setInterval(() => {}, 60_000);
