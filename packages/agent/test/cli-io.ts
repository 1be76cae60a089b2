import { PassThrough } from "node:stream";
import type { CliIo } from "../src/cli/index.js";

/** In-memory streams for running the CLI in-process. */
export function memoryIo(cwd: string, env: NodeJS.ProcessEnv, input = ""): CliIo & { out(): string; err(): string } {
	const stdout = new PassThrough();
	const stderr = new PassThrough();
	let out = "";
	let err = "";
	stdout.on("data", (chunk) => {
		out += String(chunk);
	});
	stderr.on("data", (chunk) => {
		err += String(chunk);
	});
	const stdin = new PassThrough();
	stdin.end(input);
	return { cwd, env, stdin, stdout, stderr, out: () => out, err: () => err };
}
