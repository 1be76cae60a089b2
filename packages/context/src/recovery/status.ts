import { describeProblem } from "../config/index.js";
import { renderTask } from "../task/index.js";
import type { BrokerMetrics } from "../types.js";
import { describeWorkflow } from "../workflow/index.js";
import { BoundedText, formatBytes } from "./output.js";
import type { RecoveryContext, RecoveryLimits, RecoveryResponse } from "./types.js";

/** Metrics as `key: value` lines; fields beyond the known ones are shown as they come. */
export function describeMetrics(metrics: BrokerMetrics): string[] {
	const { decisions, visibleBytesSaved, recovery, ...rest } = metrics;
	const lines = [
		`decisions: pass-through ${decisions["pass-through"] ?? 0}, structured-capsule ${decisions["structured-capsule"] ?? 0}, delta-capsule ${decisions["delta-capsule"] ?? 0}`,
		`visible bytes saved: ${visibleBytesSaved} (${formatBytes(visibleBytesSaved)})`,
		`recovery calls: ${
			Object.entries(recovery.calls)
				.map(([action, count]) => `${action} ${count}`)
				.join(", ") || "none"
		}; reads and searches with evidence ${recovery.withEvidence}, without ${recovery.empty}`,
	];
	for (const [key, value] of Object.entries(rest)) lines.push(`${key}: ${JSON.stringify(value)}`);
	return lines;
}

export async function describeStatus(context: RecoveryContext, limits: RecoveryLimits): Promise<RecoveryResponse> {
	const records = await context.archive.list();
	const disk = await context.archive.diskBytes();
	const { config } = context;
	const out = new BoundedText(limits.responseMaxBytes);
	out.add("Prime Context status");
	out.add(`session: ${context.sessionId} (${context.archive.dir})`);
	out.add(`mode: ${config.enabled ? "on" : "off"}`);
	out.add(
		`archive: ${records.length} observation${records.length === 1 ? "" : "s"}, ${formatBytes(disk)} on disk${records[0] ? `, newest ${records[0].id}` : ""}`,
	);
	out.add(
		`config: minTextBytes=${config.minTextBytes} capsuleMaxBytes=${config.capsuleMaxBytes} readMaxBytes=${config.readMaxBytes}`,
	);
	for (const problem of context.configProblems ?? []) out.add(`config problem: ${describeProblem(problem)}`);
	if (context.broker) {
		const metrics = await context.broker.metrics();
		for (const line of describeMetrics(metrics)) out.add(`broker ${line}`);
		const workflow = await context.broker.workflow?.();
		if (workflow) for (const line of describeWorkflow(workflow, metrics.visibleBytesSaved)) out.add(line);
	} else {
		out.add("broker: not attached (archive-only access)");
	}
	const task = renderTask(await context.tasks.load());
	if (task) for (const line of task.split("\n")) out.add(line);
	else out.add("task: no focus, open items or pins");
	const note = out.cut ? `[Cut to fit ${limits.responseMaxBytes} bytes.]` : undefined;
	return { action: "status", text: out.finish(note), isError: false, evidence: true, truncated: out.cut };
}
