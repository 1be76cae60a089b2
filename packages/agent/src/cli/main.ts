#!/usr/bin/env node
import { runCli } from "./run-cli.js";

const code = await runCli(process.argv.slice(2), {
	cwd: process.cwd(),
	env: process.env,
	stdin: process.stdin,
	stdout: process.stdout,
	stderr: process.stderr,
});
// Let piped output drain before exiting.
process.stdout.write("", () => process.exit(code));
