"""The summary table of docs/study/README.md from a study's results.json:
per variant, mean over seeds [95% Student-t interval] of the final values
(the last tenth of the logged steps; quality from the final generator;
KID from lab version 4), under a line with the FCD classifier's held-out
accuracy and the real-vs-real FCD floor (studies of lab version 3 and
later; lab version 4 adds the FCD and KID floors' spread).

usage: python3 docs/study/summary_table.py docs/study/dcgan-3000/results.json
"""
import json
import sys


def cell(summary, scale=1.0, digits=3):
    s = summary
    if s["n"] < 2:
        return f"{s['mean'] * scale:.{digits}g} (n={s['n']})"
    return (f"{s['mean'] * scale:.{digits}g} "
            f"[{s['ci_low'] * scale:.{digits}g}, {s['ci_high'] * scale:.{digits}g}]")


def main(path):
    with open(path) as f:
        results = json.load(f)
    if "classifier" in results:
        c = results["classifier"]
        # The field keeps its MNIST name; Fashion-MNIST's are images.
        what = "images" if results.get("dataset") == "fashion" else "digits"
        floors = ""
        if "fcd_floor" in c:  # lab version 4: the floors' spread over random halvings
            spread = lambda f: f"{f['mean']:.3g} ± {f['std']:.3g}"
            floors = (f"; over {c['fcd_floor']['n']} random halvings (mean ± std): FCD "
                      f"{spread(c['fcd_floor'])}, KID {spread(c['kid_floor'])}")
        print(f"FCD classifier: {100 * c['held_out_accuracy']:.2f}% on {c['held_out_digits']} "
              f"held-out {what}; real-vs-real FCD floor ({results['samples']} vs "
              f"{results['samples']} held-out {what}): {c['real_fcd_floor']:.4g}{floors}")
        print()
    kid = all("kid" in v["summary"] for v in results["variants"])
    print("| variant | seeds | D loss (sum) | D loss per term | G loss | FCD | " +
          ("KID | " if kid else "") + "classes | layer 2 exactly 0 | layer 2 <= 0 |")
    print("|---|---|---|---|---|---|---|---|---|" + ("---|" if kid else ""))
    for v in results["variants"]:
        s, final = v["summary"], v["final"]
        print(f"| {v['name']} | {v['seeds_completed']} | {cell(s['d_loss'])} "
              f"| {cell(s['d_loss'], 0.5)} | {cell(s['g_loss'])} | {cell(s['fcd'], digits=4)} | " +
              (f"{cell(s['kid'], digits=4)} | " if kid else "") +
              f"{cell(s['class_coverage'])} | {final['sparsity_zero'][1]:.3f} "
              f"| {final['sparsity_nonpos'][1]:.3f} |")


if __name__ == "__main__":
    main(sys.argv[1])
