// A short glossary behind a "?" button: what the widget's words mean, each entry citing the
// paper that defines it. Static text, shipped in the bundle (nothing is fetched).
import { h, uniqueId } from "./controls.js";
import "./teaching.css";

/** The paper every entry cites. */
const PAPER =
  "Wainer, \u201cA Bayesian Bradley-Terry model to compare multiple ML algorithms on " +
  "multiple data sets\u201d";

/** [term, what it means, section of the paper]. */
export const GLOSSARY = [
  [
    "P(a > b)",
    "The probability that algorithm a beats algorithm b on a data set, from the abilities " +
      "the Bradley-Terry model fits to the wins and losses: P(a > b) = w_a / (w_a + w_b). " +
      "The fit gives many draws of it; the charts show their median, HDI and full range.",
    "Sec. 4 and 5.2",
  ],
  [
    "HDI",
    "Highest density interval: the narrowest interval holding a given share of the draws " +
      "(89% by default, to set it apart from a frequentist 95% confidence interval).",
    "Sec. 5.2",
  ],
  [
    "ROPE",
    "Region of practical equivalence: when P(a > b) lies between 0.45 and 0.55 the two " +
      "algorithms are practically equivalent. The bounds are a choice; change them with " +
      "the ROPE controls.",
    "Sec. 2.3.1 and 5.5",
  ],
  [
    "Local ROPE",
    "On each data set, a difference of means smaller than d_min times the folds' spread " +
      "(Cohen's d, Eq. 4, or paired d_z, Eq. 6) counts as a tie, not a win. d_min = 0.4 " +
      "is safe for the usual 3 to 10 folds. The pair panel shows which data sets it made ties.",
    "Sec. 6.1",
  ],
  [
    "Weak rule",
    "Claims from the share of draws: better when P(a > b) > 0.5 in at least 95% of them " +
      "(above.50 \u2265 0.95); equivalent when at least 95% are inside the ROPE " +
      "(in.rope \u2265 0.95, which wins over 'better'); otherwise no claim.",
    "Sec. 5.5.1 and 9.2",
  ],
  [
    "Strong rule",
    "Claims from the mean of P(a > b): better when the mean is above 0.70; equivalent " +
      "when it is inside the ROPE; otherwise no claim. Its claims do not grow more confident as " +
      "more algorithms are compared, so it suits many algorithms.",
    "Sec. 5.5.1, 5.6 and 9.3",
  ],
  [
    "Ties",
    "The Bradley-Terry model has no ties: 'spread' gives each side half of them, rounded " +
      "up (the paper's choice); 'add' gives each side all; 'forget' drops them; 'davidson' " +
      "fits Davidson's model with a tie parameter.",
    "Sec. 6.2",
  ],
];

const TITLE =
  "Glossary: what P(a > b), HDI, ROPE, local ROPE, the weak and strong rules and ties " +
  "mean, with the paper's sections";

/**
 * The "?" button and the glossary it opens (Escape, or the button again, closes it).
 *
 * @returns {{ button: HTMLElement, panel: HTMLElement }}
 */
export function buildGlossary() {
  const panelId = uniqueId("glossary");
  const button = h("button", {
    type: "button",
    class: "bbt-glossary-button",
    text: "?",
    title: TITLE,
    "aria-label": TITLE,
    "aria-expanded": "false",
    "aria-controls": panelId,
  });
  const close = h("button", {
    type: "button",
    class: "bbt-glossary-close",
    text: "close",
    title: "Close the glossary",
  });
  const list = h(
    "dl",
    { class: "bbt-glossary-list" },
    ...GLOSSARY.flatMap(([term, text, section]) => [
      h("dt", { text: term }),
      h("dd", {}, text, " ", h("cite", { text: `(${PAPER}, ${section})` })),
    ]),
  );
  const panel = h(
    "div",
    { id: panelId, class: "bbt-glossary", role: "region", "aria-label": "Glossary" },
    h("div", { class: "bbt-glossary-head" }, h("strong", { text: "Glossary" }), close),
    list,
  );
  panel.hidden = true;
  const show = (open) => {
    panel.hidden = !open;
    button.setAttribute("aria-expanded", String(open));
    if (open) close.focus();
    else button.focus();
  };
  button.addEventListener("click", () => show(panel.hidden));
  close.addEventListener("click", () => show(false));
  panel.addEventListener("keydown", (event) => {
    if (event.key === "Escape") show(false);
  });
  return { button, panel };
}
