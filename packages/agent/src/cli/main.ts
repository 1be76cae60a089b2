#!/usr/bin/env node
import { quietLibraryNoise } from "./quiet-libraries.js";
import { runCli } from "./run-cli.js";

quietLibraryNoise();

// A reader that went away (`prime-agent -p ... | head -1`) is not an error worth a stack trace.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
	if (error.code === "EPIPE") process.exit(0);
	throw error;
});

const code = await runCli(process.argv.slice(2), {
	cwd: process.cwd(),
	env: process.env,
	stdin: process.stdin,
	stdout: process.stdout,
	stderr: process.stderr,
});
// Let piped output drain before exiting.
process.stdout.write("", () => process.exit(code));
