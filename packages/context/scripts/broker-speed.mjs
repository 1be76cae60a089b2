#!/usr/bin/env node
/**
 * Broker CPU and wall time per observation on real tool output, for profiling the broker alone.
 * Windows of the labelled fixture outputs (concatenated, repeated as needed, cut at a line end)
 * are observed one per fresh session, then all in one session; figures go to stdout.
 *
 *   npm run build && node packages/context/scripts/broker-speed.mjs [--mib 1] [--samples 10] [--fixtures <dir>]
 *
 * `--fixtures` defaults to the repository's `fixtures/outputs`. Add `--cpu-prof` to
 * node's own options to see the hot functions.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const options = { mib: 1, samples: 10, fixtures: resolve(here, "../../../fixtures/outputs") };
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i += 2) {
	const [name, value] = [args[i], args[i + 1]];
	if (name === "--mib") options.mib = Number(value);
	else if (name === "--samples") options.samples = Number(value);
	else if (name === "--fixtures") options.fixtures = resolve(value);
	else {
		console.error(`unknown option ${name}; use --mib <n>, --samples <n> or --fixtures <dir>`);
		process.exit(2);
	}
}
const dist = join(here, "../dist/index.js");
if (!existsSync(dist)) {
	console.error(`${dist} is missing: build first with \`npx tsc -b packages/context\``);
	process.exit(2);
}
if (!existsSync(options.fixtures)) {
	console.error(`no fixtures at ${options.fixtures}: pass --fixtures <dir of case folders with output.txt>`);
	process.exit(2);
}
const context = await import(pathToFileURL(dist).href);

const texts = readdirSync(options.fixtures)
	.sort()
	.map((name) => join(options.fixtures, name, "output.txt"))
	.filter((path) => existsSync(path))
	.map((path) => readFileSync(path, "utf8"));
const source = Buffer.from(texts.join("\n"), "utf8");
const size = Math.round(options.mib * 1024 * 1024);

/** `size` bytes of the fixtures from `start`, wrapping, cut at a line end when one is near. */
function windowAt(start) {
	const parts = [];
	let have = 0;
	let at = start % source.length;
	while (have < size) {
		const piece = source.subarray(at, Math.min(source.length, at + size - have));
		parts.push(piece);
		have += piece.length;
		at = 0;
	}
	const window = Buffer.concat(parts);
	const newline = window.lastIndexOf(10);
	return window.subarray(0, newline >= window.length * 0.9 ? newline + 1 : window.length).toString("utf8");
}

const stride = Math.floor(source.length / options.samples) + 7_919;
const inputs = Array.from({ length: options.samples }, (_, i) => windowAt(i * stride));
const root = mkdtempSync(join(tmpdir(), "prime-context-speed-"));

async function timeAll(sessionFor) {
	const wall = [];
	const cpu = [];
	// Two untimed observations first, so the figures are of warm code.
	for (let i = -2; i < inputs.length; i++) {
		const broker = await sessionFor(i);
		const text = inputs[(i + inputs.length) % inputs.length];
		const cpuStart = process.cpuUsage();
		const started = performance.now();
		await broker.observe({ tool: "bash", text, isError: false, exitCode: 0, command: "cat output.log" });
		const used = process.cpuUsage(cpuStart);
		if (i < 0) continue;
		wall.push(performance.now() - started);
		cpu.push((used.user + used.system) / 1000);
	}
	return { wall, cpu };
}

const percentile = (values, p) => {
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)];
};
const line = (label, { wall, cpu }) =>
	`${label}: wall p50 ${percentile(wall, 0.5).toFixed(1)} p95 ${percentile(wall, 0.95).toFixed(1)} ms; ` +
	`CPU (all threads) p50 ${percentile(cpu, 0.5).toFixed(1)} p95 ${percentile(cpu, 0.95).toFixed(1)} min ${percentile(cpu, 0).toFixed(1)} ms; ` +
	`CPU p50 per MiB ${(percentile(cpu, 0.5) / options.mib).toFixed(1)} ms`;

try {
	const open = async (id) => {
		const archive = await context.openSessionArchive({ root, sessionId: id });
		return context.createBroker({ archive, config: context.DEFAULT_CONFIG });
	};
	console.log(`${inputs.length} observations of ${options.mib} MiB from ${texts.length} fixture outputs`);
	console.log(line("fresh sessions", await timeAll((i) => open(`fresh-${i + 2}`))));
	const shared = await open("shared");
	console.log(line("one session   ", await timeAll(() => shared)));
} finally {
	rmSync(root, { recursive: true, force: true });
}
