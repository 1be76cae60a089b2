/**
 * `npm run bench:kernel -- --provider jupyter-server`: the same measures for a local kernel and a
 * kernel on a Jupyter Server, in one run, each measure taken for both before the next (so both see
 * the same minute of the machine's load), then a fan-out of `FAN_OUT` kernels of each kind.
 * Starts its own loopback server from the tests' cached venv unless given `--kernel-url` (the
 * token from JUPYTER_TOKEN), and says which iopub rate limits the server runs with: Jupyter
 * Server's defaults (1 MB/s of stream output, 1,000 messages/s, over 3 s) replace output past them
 * with a notice.
 */
import { loadavg } from "node:os";
import { Kernel, type KernelStartOptions } from "../index.js";
import { RATE_LIMITS_OFF, startJupyterServer, type TestJupyterServer } from "../testing/jupyter-server.js";
import { FAN_OUT, type FanOut, fanOut } from "./fan-out.js";
import {
	AWAITING_CELL,
	type BigPrint,
	BUSY_CELL,
	bigPrint,
	coldStart,
	interruptLatency,
	ms,
	percentile,
	roundTrips,
} from "./measures.js";

export interface SideBySideOptions {
	/** A server to use instead of a loopback one of the bench's own. */
	kernelUrl?: string;
	/** Run the bench's own server with Jupyter Server's default iopub rate limits (they drop output). */
	rateLimits?: boolean;
}

const COLD_STARTS = 5;
const ROUND_TRIPS = 200;
const INTERRUPTS = 20;
const PRINT_MB = 50;
/**
 * Both kinds of kernel get longer to start than the library's default, the same for both: on a
 * loaded machine a slow start is a figure to print, not a reason to end the run.
 */
const READY_TIMEOUT_MS = 120_000;

const load = () =>
	loadavg()
		.map((n) => n.toFixed(2))
		.join(" ");

function row(measure: string, local: string, remote: string): void {
	console.log(`| ${measure.padEnd(40)} | ${local.padEnd(34)} | ${remote.padEnd(34)} |`);
}

const spread = (sorted: number[]) =>
	`${ms(percentile(sorted, 50))} (${ms(sorted[0])}-${ms(sorted[sorted.length - 1])})`;
const p50p95 = (sorted: number[]) => `${ms(percentile(sorted, 50))} / ${ms(percentile(sorted, 95))}`;

function printed(result: BigPrint): string {
	const mb = result.fullBytes / 1e6;
	const whole = result.fullBytes === result.expectedBytes;
	const kept = whole
		? ""
		: `; ${((result.fullBytes / result.expectedBytes) * 100).toFixed(1)}% kept${result.lostOutputChars ? `, ${result.lostOutputChars} chars reported lost` : ""}${result.rateLimited ? " (rate limit)" : ""}`;
	return `${result.seconds.toFixed(2)} s, ${(mb / result.seconds).toFixed(1)} MB/s${kept}`;
}

function fanOutCells(result: FanOut): { wall: string; host: string; kernels: string } {
	const failed = result.statuses.filter((status) => status !== "ok").length;
	const notStarted = result.failures.length ? `, ${result.failures.length} did not start` : "";
	const kernels = result.kernels
		? `${result.kernels.count} × ${(result.kernels.pssMiB / result.kernels.count).toFixed(0)} MiB PSS; ` +
			`${result.kernels.otherLabel} ${result.kernels.otherMiB.toFixed(0)} MiB`
		: "not measured (not this machine)";
	return {
		wall: `${(result.allReadyMs / 1000).toFixed(2)} s / ${(result.allDoneMs / 1000).toFixed(2)} s${failed ? `, ${failed} cells not ok` : ""}${notStarted}`,
		host: `${result.host.beforeMiB.toFixed(0)} → ${result.host.peakMiB.toFixed(0)} MiB`,
		kernels,
	};
}

async function serverVersion(url: string, token: string): Promise<string> {
	const response = await fetch(new URL("api", url.endsWith("/") ? url : `${url}/`), {
		headers: { Authorization: `token ${token}` },
	});
	const body = (await response.json()) as { version?: string };
	return body.version ?? "unknown version";
}

export async function sideBySide(options: SideBySideOptions): Promise<void> {
	let own: TestJupyterServer | undefined;
	let url = options.kernelUrl;
	let token = process.env.JUPYTER_TOKEN ?? "";
	let limits: string;
	if (url) {
		limits =
			'as that server is configured (unknown to the bench; a kept share under 100% with "rate limit" means they dropped output)';
	} else {
		own = await startJupyterServer({ rateLimits: options.rateLimits });
		url = own.url;
		token = own.token;
		limits = options.rateLimits
			? "Jupyter Server's defaults (iopub_data_rate_limit 1,000,000 bytes/s, iopub_msg_rate_limit 1,000/s, rate_limit_window 3 s)"
			: `off (${RATE_LIMITS_OFF.join(" ")})`;
	}
	try {
		const local: KernelStartOptions = { readyTimeoutMs: READY_TIMEOUT_MS };
		const remote: KernelStartOptions = { jupyterServer: { url, token }, readyTimeoutMs: READY_TIMEOUT_MS };
		const version = await serverVersion(url, token);
		console.log(
			`Jupyter Server ${version} at ${own ? "loopback, started by the bench" : url}; iopub rate limits: ${limits}`,
		);
		console.log(`load average at start: ${load()}\n`);
		row("measure", "local kernel", "kernel on the Jupyter Server");
		row("-".repeat(40), "-".repeat(34), "-".repeat(34));

		const startsLocal = await coldStart(local, COLD_STARTS);
		const startsRemote = await coldStart(remote, COLD_STARTS);
		row(`cold start to ready, median of ${COLD_STARTS}`, spread(startsLocal), spread(startsRemote));

		const onHost = await Kernel.start(local);
		const onServer = await Kernel.start(remote);
		try {
			const tripsLocal = await roundTrips(onHost, ROUND_TRIPS);
			const tripsRemote = await roundTrips(onServer, ROUND_TRIPS);
			row(`trivial cell round trip, p50 / p95 of ${ROUND_TRIPS}`, p50p95(tripsLocal), p50p95(tripsRemote));

			const printLocal = await bigPrint(onHost, PRINT_MB);
			const printRemote = await bigPrint(onServer, PRINT_MB);
			row(`${PRINT_MB} MB print`, printed(printLocal), printed(printRemote));
			row(
				`host RSS during the ${PRINT_MB} MB print`,
				`${printLocal.rssBeforeMiB.toFixed(0)} → ${printLocal.rssPeakMiB.toFixed(0)} MiB peak`,
				`${printRemote.rssBeforeMiB.toFixed(0)} → ${printRemote.rssPeakMiB.toFixed(0)} MiB peak`,
			);

			const awaitingLocal = await interruptLatency(onHost, AWAITING_CELL, INTERRUPTS);
			const awaitingRemote = await interruptLatency(onServer, AWAITING_CELL, INTERRUPTS);
			row(`interrupt, awaiting cell, p50 / p95 of ${INTERRUPTS}`, p50p95(awaitingLocal), p50p95(awaitingRemote));
			const busyLocal = await interruptLatency(onHost, BUSY_CELL, INTERRUPTS);
			const busyRemote = await interruptLatency(onServer, BUSY_CELL, INTERRUPTS);
			row(`interrupt, busy CPU cell, p50 / p95 of ${INTERRUPTS}`, p50p95(busyLocal), p50p95(busyRemote));
		} finally {
			await Promise.all([onHost.shutdown(), onServer.shutdown()]);
		}

		const fanOutLocal = await fanOut();
		const fanOutRemote = await fanOut({ url, token, pid: own?.pid });
		const fanLocal = fanOutCells(fanOutLocal);
		const fanRemote = fanOutCells(fanOutRemote);
		row(`fan-out of ${FAN_OUT}: all ready / all cells done`, fanLocal.wall, fanRemote.wall);
		row(`fan-out of ${FAN_OUT}: host RSS before → peak`, fanLocal.host, fanRemote.host);
		row(`fan-out of ${FAN_OUT}: kernel processes`, fanLocal.kernels, fanRemote.kernels);
		for (const [label, result] of [
			["local", fanOutLocal],
			["on the server", fanOutRemote],
		] as const) {
			for (const failure of new Set(result.failures))
				console.log(`\nfan-out ${label}, a kernel did not start: ${failure}`);
		}
		if (own && fanOutRemote.failures.length) {
			const errors = own
				.log()
				.split("\n")
				.filter((line) => /^\[E |Traceback|Error/.test(line));
			console.log(`the server's log, its error lines:\n${errors.slice(-20).join("\n")}`);
		}
		console.log(`\nload average at end: ${load()}`);
	} finally {
		await own?.stop();
	}
}
