#!/usr/bin/env python3
"""The side-by-side table of bench/gnetworkmonitor.sh.

usage: gnetworkmonitor_table.py MARKS LIFELINE GNM [GIO]

MARKS:    "T0 T1 EXPECTED NAME…" per scenario (µs wall clock; EXPECTED is the state
          a correct monitor ends in: offline, limited or online)
LIFELINE: bench/stamp_lines.py's output for the daemon's event log ("T JSON" per event)
GNM:      bench/gnetworkmonitor.py's output (GLib's own monitor)
GIO:      the same with Lifeline's GIO module (what a GLib application sees
          with Lifeline installed)

Both sides are reduced to a verdict per signal. GNetworkMonitor's is its
connectivity (local = offline, limited, portal, full = online), which its
netlink backend sets together with `network-available`. Per scenario:
- first correct: from T0 to the first signal carrying the expected verdict,
  when the verdict before T0 was not already the expected one; for Lifeline
  also "seen", the event's `since` (when the new state began, before the
  debounce window it had to hold for);
- signals: every signal between T0 and T1; spurious: all but the one that
  brought the expected verdict (repeats, wrong verdicts, changes of nothing);
- verdict: the last one at T1, and whether it is the expected one.
"""
import json
import sys

GNM_VERDICT = {1: "offline", 2: "limited", 3: "portal", 4: "online"}


def read_lifeline(path):
    signals = []
    for line in open(path):
        stamp, _, text = line.partition(" ")
        try:
            event = json.loads(text)
        except ValueError:
            continue
        signals.append((int(stamp), event["state"], event.get("since")))
    return signals


def read_gnm(path):
    lines = open(path).read().splitlines()
    header = lines[0].split()
    initial = GNM_VERDICT.get(int(header[header.index("connectivity") + 1]), "?")
    signals = [(0, initial, None)]
    for line in lines[1:]:
        words = line.split()
        if len(words) < 2 or words[1] != "network-changed":
            continue  # notify lines: the latency's, not signals
        signals.append((int(words[0]), GNM_VERDICT.get(int(words[words.index("connectivity") + 1]), "?"), None))
    return signals


def judge(signals, t0, t1, expected):
    before = [s for s in signals if s[0] < t0]
    verdict = before[-1][1] if before else "?"
    inside = [s for s in signals if t0 <= s[0] <= t1]
    first = next((s for s in inside if s[1] == expected), None) if verdict != expected else None
    useful = 1 if first else 0
    final = inside[-1][1] if inside else verdict
    return {
        "first_ms": (first[0] - t0) / 1000 if first else None,
        "seen_ms": (first[2] - t0) / 1000 if first and first[2] else None,
        "needed": verdict != expected,
        "signals": len(inside),
        "spurious": len(inside) - useful,
        "final": final,
        "right": final == expected,
    }


def first_text(result, lifeline):
    if not result["needed"]:
        return "— (was right)"
    if result["first_ms"] is None:
        return "never"
    text = f"{result['first_ms']:.0f} ms"
    if lifeline and result["seen_ms"] is not None:
        text = f"{text} (seen {max(result['seen_ms'], 0):.0f} ms)"
    return text


def main():
    marks, lifeline_path, gnm_path = sys.argv[1:4]
    gio_path = sys.argv[4] if len(sys.argv) > 4 else None
    lifeline, gnm = read_lifeline(lifeline_path), read_gnm(gnm_path)
    gio = read_gnm(gio_path) if gio_path else None
    rows = [("scenario", "right", "Lifeline first correct", "signals (spurious)", "verdict",
             "GNetworkMonitor first correct", "signals (spurious)", "verdict")
            + (("with the GIO module first correct", "signals (spurious)", "verdict") if gio else ())]
    def side(result, lifeline):
        return (first_text(result, lifeline), f"{result['signals']} ({result['spurious']})",
                f"{result['final']} {'✓' if result['right'] else '✗'}")
    def row(name, expected, ours, theirs, app=None):
        return (name, expected) + side(ours, True) + side(theirs, False) + (side(app, False) if app else ())

    # Scenarios run in rounds ("NAME (round N)") get a row per round, then a
    # row under NAME alone for the slowest round (the worst case).
    rounds = {}
    for line in open(marks):
        t0, t1, expected, name = line.split(maxsplit=3)
        t0, t1 = int(t0), int(t1)
        ours, theirs = judge(lifeline, t0, t1, expected), judge(gnm, t0, t1, expected)
        app = judge(gio, t0, t1, expected) if gio else None
        if " (round " in name:
            rounds.setdefault(name.split(" (round ")[0], []).append((expected, ours, theirs, app))
        rows.append(row(name.strip(), expected, ours, theirs, app))
    for name, results in rounds.items():
        expected, ours, theirs, app = max(results, key=lambda r: r[1]["first_ms"] if r[1]["first_ms"] is not None else float("inf"))
        rows.append(row(name, expected, ours, theirs, app))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for number, row in enumerate(rows):
        print("| " + " | ".join(cell.ljust(width) for cell, width in zip(row, widths)) + " |")
        if number == 0:
            print("|" + "|".join("-" * (width + 2) for width in widths) + "|")
    for name, results in rounds.items():
        published = sorted(r[1]["first_ms"] for r in results if r[1]["first_ms"] is not None)
        seen = sorted(r[1]["seen_ms"] for r in results if r[1]["seen_ms"] is not None)
        if not published:
            print(f"{name}: Lifeline never right in {len(results)} rounds")
            continue
        line = f"{name}, Lifeline over {len(results)} rounds: published min {published[0] / 1000:.1f} s, " \
               f"median {published[len(published) // 2] / 1000:.1f} s, max {published[-1] / 1000:.1f} s"
        if seen:
            line += f" (seen {seen[0] / 1000:.1f} / {seen[len(seen) // 2] / 1000:.1f} / {seen[-1] / 1000:.1f} s)"
        print(line)


if __name__ == "__main__":
    main()
