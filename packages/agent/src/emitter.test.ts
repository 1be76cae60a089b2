import { expect, it } from "vitest";
import { Emitter } from "./emitter.js";

it("an Emitter calls each listener once per event, in the order they were added, until it stops listening", () => {
	const emitter = new Emitter<number>();
	const heard: string[] = [];
	const stopA = emitter.on((value) => heard.push(`a${value}`));
	emitter.on((value) => heard.push(`b${value}`));
	emitter.emit(1);
	stopA();
	stopA();
	emitter.emit(2);
	expect(heard).toEqual(["a1", "b1", "b2"]);
});

it("a listener added while an event is emitted hears the next event, not this one", () => {
	const emitter = new Emitter();
	let late = 0;
	emitter.on(() => {
		emitter.on(() => late++);
	});
	emitter.emit();
	expect(late).toBe(0);
	emitter.emit();
	expect(late).toBe(1);
});

it("a listener removed by an earlier one during an event still hears that event, and no later one", () => {
	const emitter = new Emitter();
	let second = 0;
	let stopSecond = () => {};
	emitter.on(() => stopSecond());
	stopSecond = emitter.on(() => second++);
	emitter.emit();
	emitter.emit();
	expect(second).toBe(1);
});

it("what a listener throws reaches the caller of emit, and the listeners after it do not run", () => {
	const emitter = new Emitter();
	let after = 0;
	emitter.on(() => {
		throw new Error("listener broke");
	});
	emitter.on(() => after++);
	expect(() => emitter.emit()).toThrow("listener broke");
	expect(after).toBe(0);
});
