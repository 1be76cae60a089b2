/**
 * The entry of the line selection thread (see `selection-thread.ts`): one `SelectionPass` per job,
 * fed chunks in order. Every chunk is acknowledged, even one of a failed job, so the sender's count
 * of chunks in flight stays true, and its memory goes back with the acknowledgement for the next
 * chunk (nothing here keeps a chunk's bytes past its `push`). A failed job answers its `end` with
 * the failure.
 */
import { parentPort } from "node:worker_threads";
import { type SelectedLines, SelectionPass } from "./selection-pass.js";

export type ToSelectionThread =
	| { type: "start"; job: number; copyKept: boolean }
	/** The chunk is the first `length` bytes of `buffer` (transferred, and handed back with the `ack`). */
	| { type: "chunk"; job: number; buffer: ArrayBuffer; length: number }
	| { type: "end"; job: number }
	| { type: "cancel"; job: number };

export type FromSelectionThread =
	| { type: "ack"; job: number; buffer: ArrayBuffer }
	| { type: "done"; job: number; result: SelectedLines }
	| { type: "failed"; job: number; message: string };

const port = parentPort;
if (port === null) throw new Error("selection-worker.js runs as a worker thread (see selection-thread.js)");
const post = (message: FromSelectionThread, transfer?: ArrayBuffer[]) => port.postMessage(message, transfer);
const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Each running job's pass, or what failed it. */
const jobs = new Map<number, SelectionPass | { failed: string }>();

port.on("message", (message: ToSelectionThread) => {
	const job = message.job;
	const pass = jobs.get(job);
	switch (message.type) {
		case "start":
			jobs.set(job, new SelectionPass(message.copyKept));
			return;
		case "chunk":
			if (pass instanceof SelectionPass) {
				try {
					pass.push(Buffer.from(message.buffer, 0, message.length));
				} catch (error) {
					jobs.set(job, { failed: describe(error) });
				}
			}
			post({ type: "ack", job, buffer: message.buffer }, [message.buffer]);
			return;
		case "end":
			jobs.delete(job);
			if (pass instanceof SelectionPass) {
				try {
					post({ type: "done", job, result: pass.finish() });
				} catch (error) {
					post({ type: "failed", job, message: describe(error) });
				}
			} else post({ type: "failed", job, message: pass?.failed ?? "the job was never started" });
			return;
		case "cancel":
			jobs.delete(job);
			return;
	}
});
