# Compares autotune's modelled traffic of each chosen config (--report=json)
# with the tile executor's KernelStats for the same program (aicm-run
# --stats=json): bytes read, bytes written, grid, per kernel.
import json, sys
rep = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"pass":"autotune"')]
# --stats=json writes its one JSON object alone on stdout (the previews go
# to stderr), so the file reads as JSON as it is
stats = {k['kernel']: k for k in json.load(open(sys.argv[2]))['kernels']}
for r in rep:
    c = r['chosen']
    keys = [k for k in ('BM', 'BN', 'BK', 'warps', 'stages') if k in c]
    cand = [s for s in r['scores'] if all(s[k] == c[k] for k in keys) and 'score' in s][0]
    k = stats[r['kernel']]
    got = (cand['loaded'], cand['stored'], cand['programs'])
    want = (k['dram__bytes_read.sum'], k['dram__bytes_write.sum'], k['programs'])
    print(r['kernel'], r['kind'], 'model', got, 'executor', want, 'agree' if got == want else 'DIFFER')
