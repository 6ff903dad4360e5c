#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
"""Fit the simulator's machine to this machine, then report its error against adapt2.

  perf/sim/calibrate.py --builddir BUILD [--out DIR] [--repeat 5]              # one host
  perf/sim/calibrate.py --builddir BUILD --cluster 4 --rate 1gbit [--out DIR]   # emulated cluster
  perf/sim/calibrate.py --builddir BUILD --from DIR [--out DIR2]                # refit, no runs

What is measured (every MPI run under `flock /tmp/adapt2-measure.lock`, one
run per lock, launched as perf/compare.py does: adapt2 from BUILD/.libs,
--oversubscribe --bind-to none --mca mpi_yield_when_idle 1):
  * perf/sim/pingpong at np 2 (1 B .. 4 MiB): half round trips and the gap
    between back-to-back messages. One host: both ranks on it. Cluster: once
    inside node0 (vader) and twice between node0 and node1 (tcp): back to
    back, and with a pause before each round trip (-s) so that the links'
    token buckets refill. And, inside one host (node0), one pair of ranks per
    core ping-ponging at once (-P, np 2 x nproc): what a message costs where
    ranks outnumber cores.
  * perf/adapt2_bench (OSU-style, "last": per-iteration max over the ranks
    that hold the result, median over iterations) for bcast and reduce,
    16 KiB .. 4 MiB, in the cases below. One host: np 2, 4 and 8, all ranks
    on it. Cluster (--cluster 4): np 2 and np 4 inside node0 (for the fit),
    then np 4 on 4 nodes x 1 (--map-by node) and np 8 on 4 nodes x 2 (block
    mapping: ranks 2k and 2k+1 on node k), where adapt2 builds multi-level
    trees, and so does the simulator (it gives the engine the same nodes).
  This machine is shared: each run's "foreign" CPU load (CPU time of other
  processes while it ran, from /proc/stat minus our own children's; for
  runs on several cluster nodes, whose remote ranks are not our children,
  the load in the second after the run instead) is recorded; a run is
  repeated (up to --tries) while it exceeds --max-foreign, and before each
  run the script waits (up to --quiet-wait s) for the machine to be quiet. Per size the minimum over --repeat runs is kept: the
  simulator models an undisturbed machine, and other load only adds time.

What is fitted (physical parameters of the machine, the same for every np,
collective and size; no per-case terms), and on what:
  * LogGP per link, from its ping-pong: o = the gap between small
    back-to-back messages (sender CPU per message), L = half round trip of
    1 byte - 2o, G = slope of the half round trip over 64 KiB .. 1 MiB
    (Theil-Sen: the median of pairwise slopes), g = o. Eager limits: Open
    MPI's (vader 4 KiB, tcp 64 KiB). Shared memory moves data by single copy
    (vader's CMA): intra.get=1, the receiver's CPU copies at G.
    Between cluster nodes (tbf-shaped): G = slope of the back-to-back gap
    (the sustained rate), G0 = slope of the paused half round trip (the rate
    while a bucket has tokens), L from the paused 1-byte round trip, and
    burst = the bucket adapt2-cluster gives tbf (10 ms of --rate, at least
    64 KiB; not fitted).
  * copy (the engine's own copies, us/byte) = intra.G: a memcpy like CMA's.
  * wake (us per message and extra rank per core) = the pairs' 1-byte half
    round trip - the lone pair's (2 ranks per core: each message waits for
    the scheduler to run its receiver).
  * Cores: `nproc`. A host of np ranks is a node (k=np, cores=nproc); CPU
    work is slowed by the ranks busy when it starts over the cores (share=1:
    a rank waiting for messages yields its core, mpi_yield_when_idle).
    Cluster: nodes of the cases' ranks per node, cores=nproc per node (what
    each node sees), host_cores=nproc (all nodes share this machine's cores).
  * gamma (combining, us/byte): bisection so that the simulated np-2 reduce
    matches the measured one (256 KiB .. 4 MiB).
  * mem (us/byte: the memory bandwidth concurrent copies and combines
    share): bisection so that the simulated np-4 bcast on one node matches
    the measured one (64 KiB .. 1 MiB); gamma and mem are fitted twice in turn.
The simulator runs each case as adapt2_bench does (-b 110: 10 warm-up and
100 timed calls, each after a barrier; the median of the slowest rank's time
per call), so that token buckets and background work carry over from call to
call.
So the fit uses the ping-pongs, the np-2 reduce and the np-4 bcast on one
node; everything else is validation. The report gives per case (np,
collective, placement, size) measured and simulated times and the error
sim/measured - 1, marks the cases used for fitting, and gives the mean
|error| over 64 KiB .. 1 MiB per case and per np over the validation cases
(goal: within 25%).

Writes DIR/measured.json (every run, with its foreign load) and
DIR/calibration.txt (fitted parameters and -M specs first, then the tables).
--from DIR refits and reports from DIR/measured.json; --no-get, --no-copy,
--no-mem, --no-wake and --share-fixed refit without one refinement, to show
what each changes.
"""
import argparse
import fcntl
import json
import os
import resource
import statistics
import subprocess
import sys
import time

LOCK = '/tmp/adapt2-measure.lock'
SYSTEM_DIR = '/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3'
HERE = os.path.dirname(os.path.abspath(__file__))
CLUSTER = os.path.join(HERE, '..', '..', 'contrib', 'adapt2-cluster')
SIZES = [16384 * 2 ** i for i in range(9)]          # 16K .. 4M: measured
CHECK = [65536 * 2 ** i for i in range(5)]          # 64K .. 1M: the error reported
GAMMA_FIT = [262144 * 2 ** i for i in range(5)]     # np-2 reduce sizes for gamma
G_FIT = [65536 * 2 ** i for i in range(5)]          # ping-pong sizes for G
EAGER = {'intra': 4096, 'inter': 65536}             # btl_vader_eager_limit, btl_tcp_eager_limit

# The adapt2 runs: (np, collective, placement, role). Placements: 'host' (one
# host), 'node0' (cluster: all on node0), 'nodes' (cluster: one per node),
# 'block' (cluster: block mapping). Roles: 'gamma', 'mem' (fitted on), 'check'.
HOST_CASES = [(2, 'bcast', 'host', 'check'), (2, 'reduce', 'host', 'gamma'),
              (4, 'bcast', 'host', 'mem'), (4, 'reduce', 'host', 'check'),
              (8, 'bcast', 'host', 'check'), (8, 'reduce', 'host', 'check')]
CLUSTER_CASES = [(2, 'reduce', 'node0', 'gamma'), (4, 'bcast', 'node0', 'mem'),
                 (4, 'bcast', 'nodes', 'check'), (4, 'reduce', 'nodes', 'check'),
                 (8, 'bcast', 'block', 'check'), (8, 'reduce', 'block', 'check')]


# ---------------------------------------------------------------- measuring

def cpu_busy():
    """CPU seconds all processes have used so far (/proc/stat)."""
    with open('/proc/stat') as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / os.sysconf('SC_CLK_TCK')


def wait_quiet(limit_s, threshold):
    """Waits until the machine is quiet (< threshold of its CPUs busy over
    1 s), at most limit_s."""
    t_end = time.time() + limit_s
    while True:
        b0 = cpu_busy()
        time.sleep(1)
        if (cpu_busy() - b0) / (os.cpu_count() or 1) < threshold or time.time() > t_end:
            return


class Runner:
    def __init__(self, a):
        self.a = a
        self.env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1')
        if a.cluster:
            self.env['ADAPT2_CLUSTER_STATE'] = a.cluster_state

    def command(self, np, prog, args, where):
        mca = ['--mca', 'mca_base_component_path', '%s/.libs:%s' % (self.a.builddir, SYSTEM_DIR),
               '--mca', 'coll_adapt2_priority', '100']
        common = ['--oversubscribe', '--bind-to', 'none', '--mca', 'mpi_yield_when_idle', '1']
        if where == 'host':
            return ['mpirun'] + common + mca + ['-np', str(np), prog] + args
        mapping = {'node0': ['--host', 'node0:%d' % np], 'nodes': ['--map-by', 'node'], 'block': []}[where]
        return [CLUSTER, 'mpirun'] + common + mapping + mca + ['-np', str(np), prog] + args

    def run(self, cmd, remote):
        """One locked run; (stdout, foreign load as a fraction of all CPUs). With remote
        ranks (not our children: their CPU time cannot be told from others'), the load
        in the second after the run."""
        with open(LOCK, 'a') as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            b0, t0 = cpu_busy(), time.time()
            p = subprocess.run(cmd, capture_output=True, text=True, env=self.env, timeout=600)
            b1, t1 = cpu_busy(), time.time()
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            if remote:
                time.sleep(1)
                after = (cpu_busy() - b1) / ((time.time() - t1) * (os.cpu_count() or 1))
        if p.returncode != 0:
            raise RuntimeError('%s failed (%d):\n%s' % (' '.join(cmd), p.returncode, p.stderr[-3000:]))
        if remote:
            return p.stdout, after
        ours = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
        return p.stdout, max(0.0, (b1 - b0) - ours) / max(1e-3, (t1 - t0) * (os.cpu_count() or 1))

    def measure(self, np, prog, args, where):
        """Runs until quiet enough (or --tries). Returns {size: [columns]}, foreign."""
        best_run = None
        for _ in range(self.a.tries):
            wait_quiet(self.a.quiet_wait, self.a.max_foreign)
            out, foreign = self.run(self.command(np, prog, args, where), where in ('nodes', 'block'))
            if best_run is None or foreign < best_run[1]:
                best_run = (out, foreign)
            if foreign <= self.a.max_foreign:
                break
        rows = {}
        for line in best_run[0].splitlines():
            f = line.split()
            if f and f[0].isdigit():
                rows[int(f[0])] = [float(x) for x in f[1:]]
        return rows, best_run[1]


def cluster_env(a):
    return dict(os.environ, ADAPT2_CLUSTER_STATE=a.cluster_state)


def cluster_up(a):
    subprocess.run([CLUSTER, 'down'], env=cluster_env(a), capture_output=True)
    cmd = [CLUSTER, 'up', str(a.cluster)] + (['--rate', a.rate] if a.rate else [])
    p = subprocess.run(cmd, env=cluster_env(a), capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit('calibrate.py: %s failed:\n%s' % (' '.join(cmd), p.stderr))


def cluster_down(a):
    p = subprocess.run([CLUSTER, 'down'], env=cluster_env(a), capture_output=True, text=True)
    if p.returncode != 0:
        log('adapt2-cluster down failed: %s' % p.stderr)


def measure_all(a):
    r = Runner(a)
    bench = os.path.join(a.builddir, 'perf/adapt2_bench')
    pingpong = os.path.join(a.builddir, 'perf/sim/pingpong')
    cores = os.cpu_count() or 1
    data = {'cluster': a.cluster, 'rate': a.rate, 'burst': tbf_burst(a.rate), 'cores': cores, 'runs': []}
    local = 'node0' if a.cluster else 'host'
    pings = [('intra', 2, local, [])]
    if a.cluster:
        pings += [('inter', 2, 'nodes', []), ('inter-paused', 2, 'nodes', ['-s', '20', '-m', '1:1M'])]
    pings.append(('pairs', 2 * cores, local, ['-P']))
    out = os.path.join(a.out, 'measured.json')
    for rep in range(a.repeat):
        for link, np, where, extra in pings:
            rows, foreign = r.measure(np, pingpong, ['-m', '1:4M'] + extra, where)  # a later -m wins
            data['runs'].append({'kind': 'pingpong', 'link': link, 'np': np, 'foreign': foreign, 'rows': rows})
            log('repeat %d: pingpong %s np %d (foreign load %.0f%%)' % (rep + 1, link, np, 100 * foreign))
        for np, coll, where, _ in (CLUSTER_CASES if a.cluster else HOST_CASES):
            args = ['-k', coll, '-m', '%d:%d' % (SIZES[0], SIZES[-1])]
            rows, foreign = r.measure(np, bench, args, where)
            data['runs'].append({'kind': coll, 'np': np, 'where': where, 'foreign': foreign, 'rows': rows})
            log('repeat %d: %s np %d %s (foreign load %.0f%%)' % (rep + 1, coll, np, where, 100 * foreign))
        with open(out, 'w') as f:
            json.dump(data, f)
    return data


def tbf_burst(rate):
    """The token bucket contrib/adapt2-cluster gives tc tbf for --rate (bytes; 0: unshaped)."""
    if not rate:
        return 0
    units = {'bit': 0.125, 'kbit': 125, 'mbit': 125e3, 'gbit': 125e6, 'tbit': 125e9,
             'bps': 1, 'kbps': 1e3, 'mbps': 1e6, 'gbps': 1e9}
    num = rate.rstrip('abcdefghijklmnopqrstuvwxyz')
    return max(int(float(num) * units.get(rate[len(num):].lower() or 'bit', 0.125) / 100), 65536)


def log(msg):
    sys.stderr.write('calibrate.py: %s\n' % msg)
    sys.stderr.flush()


# ---------------------------------------------------------------- the model

def best(data, kind, col, **match):
    """Per size: the minimum over the matching runs of column `col`."""
    out = {}
    for run in data['runs']:
        if run['kind'] != kind or any(run.get(k) != v for k, v in match.items()):
            continue
        for size, cols in run['rows'].items():
            size = int(size)
            out[size] = min(out.get(size, float('inf')), cols[col])
    return out


def theil_sen(points):
    xs = sorted(points)
    return statistics.median((points[b] - points[a]) / (b - a) for i, a in enumerate(xs) for b in xs[i + 1:])


def fit_link(data, link):
    """LogGP of one link class from its ping-pong runs."""
    pp = best(data, 'pingpong', 0, link=link)       # pp_median_us
    gap = best(data, 'pingpong', 2, link=link)      # gap_median_us
    o = statistics.median(gap[n] for n in (1, 2, 4, 8, 16, 32, 64) if n in gap)
    out = {'eager': EAGER[link], 'o': o, 'g': o}
    if link == 'inter' and data.get('burst'):  # tbf-shaped: paused round trips see the line rate
        paused = best(data, 'pingpong', 0, link='inter-paused')
        out['L'] = max(paused[1] - 2 * o, 0.05)
        out['G'] = max(theil_sen({n: gap[n] for n in G_FIT if n in gap}), 1e-9)
        out['G0'] = max(theil_sen({n: paused[n] for n in G_FIT if n in paused}), 1e-9)
        out['burst'] = data['burst']
    else:
        out['L'] = max(pp[1] - 2 * o, 0.05)
        out['G'] = max(theil_sen({n: pp[n] for n in G_FIT if n in pp}), 1e-9)
    return out


def bisect(f, target, lo, hi, steps=24):
    """x in [lo, hi] where the increasing f(x) meets target."""
    for _ in range(steps):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < target else (lo, mid)
    return (lo + hi) / 2


class Model:
    def __init__(self, a, data):
        self.a = a
        self.data = data
        self.cores = data['cores']
        self.links = {'intra': fit_link(data, 'intra')}
        if data['cluster']:
            self.links['inter'] = fit_link(data, 'inter')
        self.links['intra']['get'] = 0 if a.no_get else 1
        self.copy = 0 if a.no_copy else self.links['intra']['G']
        lone = best(data, 'pingpong', 0, link='intra')[1]
        self.wake = 0 if a.no_wake else max(best(data, 'pingpong', 0, link='pairs')[1] - lone, 0)
        self.gamma = self.mem = 0.0

    def spec(self, np, where):
        items = []
        for name, l in self.links.items():
            items += ['%s.%s=%.6g' % (name, k, v) for k, v in l.items()]
        nodes = self.data['cluster']
        k = {'host': np, 'node0': np, 'nodes': 1, 'block': -(-np // max(nodes, 1))}[where]
        items += ['k=%d' % k, 'cores=%d' % self.cores]
        if nodes:
            items.append('host_cores=%d' % self.cores)
        items += ['share=%d' % (0 if self.a.share_fixed else 1), 'mem=%.6g' % self.mem, 'wake=%.4g' % self.wake,
                  'gamma=%.6g' % self.gamma, 'copy=%.6g' % self.copy]
        return ','.join(items)

    def simulate(self, np, coll, where, sizes):
        """Simulated t_last (us) per size: adapt2 with its defaults, one call, every rank
        entering at 0 (the benchmark's barrier before every call)."""
        tsv = '/tmp/adapt2_sim_calib.%d.tsv' % os.getpid()
        cmd = [os.path.join(self.a.builddir, 'perf/sim/adapt2_sim'), '-k', coll, '-a', 'adapt2', '-p', str(np),
               '-b', '110', '-m', ','.join(str(n) for n in sizes), '-M', self.spec(np, where), '-o', tsv]
        subprocess.run(cmd, check=True, capture_output=True)
        out = {}
        with open(tsv) as f:
            for line in f:
                c = line.split()
                if c and not c[0].startswith('#'):
                    out[int(c[3])] = float(c[5])
        os.unlink(tsv)
        return out

    def fit_case(self, role, sizes, attr, hi):
        """Bisection on one parameter so that the fitting case's total simulated time over
        `sizes` matches the measured total."""
        np, coll, where, _ = next(c for c in self.cases() if c[3] == role)
        meas = best(self.data, coll, 4, np=np, where=where)
        sizes = [n for n in sizes if n in meas]

        def total(x):
            setattr(self, attr, x)
            return sum(self.simulate(np, coll, where, sizes).values())
        setattr(self, attr, bisect(total, sum(meas[n] for n in sizes), 0.0, hi))

    def fit(self):
        for _ in range(2):
            self.fit_case('gamma', GAMMA_FIT, 'gamma', 1e-3)
            if not self.a.no_mem:
                self.fit_case('mem', CHECK, 'mem', 1e-3)

    def cases(self):
        return CLUSTER_CASES if self.data['cluster'] else HOST_CASES


def human(n):
    return '%dM' % (n >> 20) if n >= 1 << 20 else '%dK' % (n >> 10)


PLACES = {'host': 'one host', 'node0': '1 node', 'nodes': '4 nodes x 1', 'block': '4 nodes x 2'}


def report(model, data):
    runs = data['runs']
    lines = ['# %s; cores=%d; %d runs, foreign load max %.0f%% median %.0f%%'
             % ('emulated cluster: %d nodes, rate %s' % (data['cluster'], data['rate'] or 'unshaped')
                if data['cluster'] else 'one host', data['cores'], len(runs),
                100 * max(r['foreign'] for r in runs), 100 * statistics.median(r['foreign'] for r in runs))]
    for name, l in model.links.items():
        lines.append('# %s (ping-pong): L=%.3f us o=%.3f us g=%.3f us G=%.4g us/B (%.3f GB/s) eager=%d get=%d%s'
                     % (name, l['L'], l['o'], l['g'], l['G'], 1e-3 / l['G'], l['eager'], l.get('get', 0),
                        ' burst=%d B at G0=%.4g us/B (%.3f GB/s)' % (l['burst'], l['G0'], 1e-3 / l['G0'])
                        if 'burst' in l else ''))
    lines.append('# wake=%.3f us (ping-pong of %d pairs at once), copy=%.4g us/B'
                 % (model.wake, next(r['np'] for r in runs if r.get('link') == 'pairs') // 2, model.copy))
    fits = {c[3]: c for c in model.cases()}
    lines.append('# gamma=%.4g us/B (%.2f GB/s; fitted on np %d reduce, %s, %s..%s)'
                 % (model.gamma, 1e-3 / model.gamma if model.gamma else float('inf'), fits['gamma'][0],
                    PLACES[fits['gamma'][2]], human(GAMMA_FIT[0]), human(GAMMA_FIT[-1])))
    lines.append('# mem=%.4g us/B (%.2f GB/s shared by concurrent copies; fitted on np %d bcast, %s, %s..%s)'
                 % (model.mem, 1e-3 / model.mem if model.mem else float('inf'), fits['mem'][0],
                    PLACES[fits['mem'][2]], human(CHECK[0]), human(CHECK[-1])))
    for np, where in sorted({(c[0], c[2]) for c in model.cases()}):
        lines.append('# np %d %s: -M %s' % (np, PLACES[where], model.spec(np, where)))
    lines.append('%-4s %-7s %-12s %-6s %12s %12s %8s' % ('np', 'coll', 'placement', 'size', 'measured_us',
                                                        'sim_us', 'error'))
    summary = []
    for np, coll, where, role in model.cases():
        meas = best(data, coll, 4, np=np, where=where)
        sizes = [n for n in SIZES if n in meas]
        sim = model.simulate(np, coll, where, sizes)
        errs = []
        for n in sizes:
            e = sim[n] / meas[n] - 1
            if n in CHECK:
                errs.append(abs(e))
            note = ('  fitted (%s)' % role if role != 'check' else '') + ('' if n in CHECK else '  (not in the mean)')
            lines.append('%-4d %-7s %-12s %-6s %12.1f %12.1f %+7.1f%%%s'
                         % (np, coll, PLACES[where], human(n), meas[n], sim[n], 100 * e, note))
        summary.append((np, coll, where, role, errs))
    for np, coll, where, role, es in summary:
        lines.append('# np %d %-6s %-12s: mean |error| %5.1f%%, max %5.1f%% (%s..%s)%s'
                     % (np, coll, PLACES[where], 100 * statistics.mean(es), 100 * max(es), human(CHECK[0]),
                        human(CHECK[-1]), '  [fitted: %s]' % role if role != 'check' else ''))
    for np in sorted({c[0] for c in model.cases() if c[3] == 'check'}):
        es = [e for n, _, _, role, v in summary if n == np and role == 'check' for e in v]
        lines.append('# np %d validation: mean |error| %5.1f%% over %d cases x sizes (goal: 25%%)' % (np, 100 * statistics.mean(es), len(es)))
    return '\n'.join(lines) + '\n'


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--builddir', required=True)
    p.add_argument('--out', default='.')
    p.add_argument('--repeat', type=int, default=5, help='runs per measurement (default 5)')
    p.add_argument('--tries', type=int, default=3, help='tries per run while too loaded (default 3)')
    p.add_argument('--max-foreign', type=float, default=0.10,
                   help='CPU share of other processes above which a run is repeated (default 0.10)')
    p.add_argument('--quiet-wait', type=float, default=60, help='seconds to wait for a quiet machine (default 60)')
    p.add_argument('--cluster', type=int, default=0, help='emulated cluster of N nodes (contrib/adapt2-cluster)')
    p.add_argument('--rate', default='', help='cluster link rate (tc syntax, e.g. 1gbit)')
    p.add_argument('--cluster-state', default='/tmp/adapt2-calibrate-cluster',
                   help='state directory of the cluster this script brings up and takes down')
    p.add_argument('--from', dest='from_dir', help='refit from DIR/measured.json (no runs)')
    p.add_argument('--no-get', action='store_true', help='shared memory without single copy (intra.get=0)')
    p.add_argument('--no-copy', action='store_true', help="the engine's copies cost nothing (copy=0)")
    p.add_argument('--no-mem', action='store_true', help='no shared memory bandwidth (mem=0)')
    p.add_argument('--no-wake', action='store_true', help='no scheduling delay (wake=0)')
    p.add_argument('--share-fixed', action='store_true',
                   help='shared cores slow every CPU cost by ranks/cores (share=0), not by the busy ranks')
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.from_dir:
        with open(os.path.join(a.from_dir, 'measured.json')) as f:
            data = json.load(f)
    elif a.cluster:
        if a.cluster != 4:
            sys.exit('calibrate.py: --cluster 4 (np 4 runs as 4 nodes x 1, np 8 as 4 nodes x 2)')
        cluster_up(a)
        try:
            data = measure_all(a)
        finally:
            cluster_down(a)
    else:
        data = measure_all(a)
    model = Model(a, data)
    model.fit()
    text = report(model, data)
    with open(os.path.join(a.out, 'calibration.txt'), 'w') as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == '__main__':
    main()
