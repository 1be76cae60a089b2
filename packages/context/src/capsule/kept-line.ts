import type { LineKind } from "../outcome/index.js";

/** A line the selector kept, with its original coordinates. */
export interface KeptLine {
	/** 1-based line number. */
	line: number;
	/** ANSI-free text, capped at the selector's per-line bound. */
	text: string;
	/** The raw text (ANSI included), capped: any substring of it occurs in the archived line. */
	raw: string;
	/** UTF-8 bytes of the whole original line. */
	bytes: number;
	kind: LineKind;
	/** Lines this one stands for (decisive lines only; 1 otherwise): same shape, or same text for evidence kinds. */
	repeats: number;
	/** An evidence line (never folded by shape) whose shape an earlier kept line already has. */
	shapeSeen?: boolean;
	/**
	 * A line kept after an evidence line that was folded into an identical one (node's assertion
	 * `6 !== 7` under a repeated `AssertionError ...: Expected values to be strictly equal:`): what
	 * tells the two failures apart, so it is folded only with an identical line, never by shape.
	 */
	afterFold?: boolean;
}
