// Hostile names, as in tests/security/hostile.py: HTML that would run if it were parsed, and
// bidi controls that would reorder the text around a name if left open.
export const HTML = "<img src=x onerror=alert(1)>";
export const SCRIPT = "<script>alert(1)</script>";
/** A right-to-left override (U+202E) left open. */
export const RLO = "\u202eP(right) override";
/** An isolate (RLI, U+2067) left open. */
export const OPEN_ISOLATE = "open\u2067isolate";
/** A PDI (U+2069) that closes nothing, then an embedding (RLE) left open. */
export const STRAY_PDI = "stray\u2069\u202bpdi";
export const HEBREW = "\u05e2\u05d1\u05e8\u05d9\u05ea";
export const ALL = [HTML, SCRIPT, RLO, OPEN_ISOLATE, STRAY_PDI, HEBREW, "p > q", "a\nb"];
