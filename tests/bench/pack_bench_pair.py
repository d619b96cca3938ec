"""Packs one run of a pair for tests/data/bench_pairs.

Keeps what the replay reads from leaky-bench's raw.json (with the rerun
merged in): format, context, machine and each benchmark's identity, seconds
(to 7 significant digits), round and pass ids, or its error; the pause and
repetition counts are dropped. Writes gzip without a timestamp, so the same
run packs to the same bytes.

Usage: pack_bench_pair.py RAW_JSON OUT_JSON_GZ
"""
import gzip
import json
import sys

FIELDS = ['name', 'group', 'contender', 'dtype', 'mode', 'elements', 'threads', 'bytes', 'seconds',
          'round_ids', 'pass_ids', 'error']
DROPPED = {'pause_us_median', 'pauses_capped', 'reps'}


def main():
    src, dst = sys.argv[1], sys.argv[2]
    with open(src) as f:
        raw = json.load(f)
    benchmarks = []
    for b in raw['benchmarks']:
        unknown = set(b) - set(FIELDS) - DROPPED
        if unknown:
            sys.exit(f"{src}: benchmark {b.get('name')} has fields this script does not know: {sorted(unknown)}")
        if 'seconds' in b:
            b['seconds'] = [float('%.7g' % s) for s in b['seconds']]
        benchmarks.append({k: b[k] for k in FIELDS if k in b})
    out = {'format': raw['format'], 'context': raw['context'], 'machine': raw['machine'],
           'benchmarks': benchmarks}
    with open(dst, 'wb') as f:
        f.write(gzip.compress(json.dumps(out, indent=1).encode(), mtime=0))


if __name__ == '__main__':
    main()
