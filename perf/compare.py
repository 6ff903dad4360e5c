#!/usr/bin/python3
"""Compare adapt2 with Open MPI's own collective components.

Runs perf/adapt2_bench (an OSU-style benchmark) once per component and
collective, interleaved run by run (A B C A B C ...) so that the drift of a
busy machine hits every component alike, repeats that --repeat times, and
prints per message size the median over repeats of each component's average
latency (OSU's number), of its "last" latency (per-iteration max over ranks of
the time in the call) and of its end-to-end "span" (latest return on any rank
minus the root's call; one node only), their spread (min-max over repeats),
and the ratios of the first component (adapt2 by default) to each other one:
a ratio < 1 means the first component is faster.  It ends with one line per
collective and other component: the geometric mean of the ratios over sizes
>= 64 KiB.

Before the runs, a pre-flight run per component with --mca coll_base_verbose 10
checks that the component is really selected (--no-check skips it).

  perf/compare.py --component-dir <builddir>/.libs            # the default run
  perf/compare.py --quick --component-dir <builddir>/.libs --validate

Writes DIR/raw.csv (every size of every run), DIR/summary.csv (the table),
DIR/logs/ (each run's command and output) and DIR/<collective>.png (gnuplot,
perf/plot.gp).

Python 3 standard library only.
"""
import argparse
import csv
import datetime
import math
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# How each component is selected.  "module": the coll module that must show up
# as "selecting <module>, ... Enabled" in the pre-flight check (None: Open
# MPI's default selection, nothing to check).
COMPONENTS = {
    'adapt2': {'mca': [('coll_adapt2_priority', '100')], 'module': 'adapt2'},
    'tuned': {'mca': [], 'module': None},      # the default on this machine
    'libnbc': {'mca': [], 'module': None},     # the default for MPI_I* collectives
    'adapt': {'mca': [('coll_adapt_priority', '100')], 'module': 'adapt'},
    'han': {'mca': [('coll_han_priority', '100')], 'module': 'han'},
}
COLLECTIVES = ('bcast', 'ibcast')   # what perf/adapt2_bench -k knows
ALWAYS = ['--oversubscribe', '--bind-to', 'none', '--mca', 'mpi_yield_when_idle', '1']
RATIO_FROM = 64 * 1024              # summary line: sizes >= this
QUICK = {'sizes': '1:1M', 'iters': '50:20', 'warmup': '5:2', 'repeat': 2}
COLUMNS = ('size', 'avg_us', 'min_us', 'max_us', 'last_us', 'last_median_us', 'iters')
OPTIONAL_COLUMNS = ('span_us', 'span_median_us')
# The metrics compared: (name, benchmark column, meaning).  The plot shows the
# first two.
METRICS = (
    ('avg', 'avg_us', 'OSU average latency: per-rank mean over iterations, mean over ranks'),
    ('last', 'last_us', 'time until the last rank holds the data: per-iteration max over '
                        'ranks of the time in the call, mean over iterations'),
    ('span', 'span_us', "end to end: latest return on any rank minus the root's call, "
                        'mean over iterations (one node only)'),
)


class UsageError(Exception):
    pass


def label(component, collective):
    """Name of what actually runs: tuned has no non-blocking collectives, so
    the default for ibcast is libnbc (and libnbc has no blocking ones)."""
    if component in ('tuned', 'libnbc'):
        return 'libnbc' if collective.startswith('i') else 'tuned'
    return component


def parse_size(text):
    m = re.fullmatch(r'\s*(\d+)\s*([kKmMgG]?)(i?[bB])?\s*', text)
    if not m:
        raise UsageError('bad size %r (use e.g. 1, 64K, 16M)' % text)
    return int(m.group(1)) << {'': 0, 'k': 10, 'm': 20, 'g': 30}[m.group(2).lower()]


def human_size(n):
    for shift, suffix in ((30, 'G'), (20, 'M'), (10, 'K')):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return '%d%s' % (n >> shift, suffix)
    return str(n)


def fmt_us(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return '-'
    if v < 10:
        return '%.2f' % v
    if v < 1000:
        return '%.1f' % v
    return '%.0f' % v


def iter_spec(text, what):
    if not re.fullmatch(r'\d+(:\d+)?', text):
        raise UsageError('bad %s %r (N or SMALL:LARGE)' % (what, text))
    return text


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog='compare.py',
        description='Run perf/adapt2_bench for several coll components, interleaved, and '
                    'compare them (table on stdout, CSV and PNG under --out).',
        epilog='Ratios are first-component/other (adapt2/other by default): < 1 means the '
               'first component is faster. Example: perf/compare.py --quick '
               '--component-dir /tmp/build/.libs --validate')
    p.add_argument('--components', default='adapt2,tuned,adapt',
                   help='comma list from %s (default: adapt2,tuned,adapt); the first one is '
                        'the reference of the ratios' % ','.join(COMPONENTS))
    p.add_argument('--collective', default='bcast',
                   help='comma list from %s (default: bcast)' % ','.join(COLLECTIVES))
    p.add_argument('--sizes', default=None,
                   help='MIN:MAX message sizes in bytes, powers of two, K/M suffixes '
                        '(default 1:16M; --quick: %s)' % QUICK['sizes'])
    p.add_argument('--np', type=int, default=4, help='ranks (default 4)')
    p.add_argument('--repeat', type=int, default=None,
                   help='runs per component (default 3; --quick: %d)' % QUICK['repeat'])
    p.add_argument('--iters', default=None,
                   help="benchmark -i: N, or SMALL:LARGE for sizes <= / > 8 KiB "
                        "(default: the benchmark's OSU defaults 1000:100; --quick: %s)"
                        % QUICK['iters'])
    p.add_argument('--warmup', default=None,
                   help="benchmark -x (default 100:10; --quick: %s)" % QUICK['warmup'])
    p.add_argument('--validate', action='store_true',
                   help='check every element on every rank after every iteration (-c)')
    p.add_argument('--component-dir', metavar='DIR', default=None,
                   help="directory holding mca_coll_adapt2.so (e.g. <builddir>/.libs), "
                        "searched before Open MPI's own; default: the installed adapt2")
    p.add_argument('--bench', metavar='PATH', default=None,
                   help='the benchmark (default: perf/adapt2_bench next to this script, '
                        'else <component-dir>/../perf/adapt2_bench)')
    p.add_argument('--extra-mca', metavar='"K V,K V"', default='',
                   help='more --mca pairs for every run')
    p.add_argument('--timeout', type=float, default=600,
                   help='seconds allowed per mpirun (default 600)')
    p.add_argument('--out', metavar='DIR', default=None,
                   help='results directory (default perf/results/<timestamp>)')
    p.add_argument('--mpirun', default='mpirun', help='mpirun to use (default: mpirun)')
    p.add_argument('--no-check', action='store_true',
                   help='skip the pre-flight check that each component is really selected')
    p.add_argument('--no-plot', action='store_true', help='do not run gnuplot')
    p.add_argument('--quick', action='store_true',
                   help='few sizes, iterations and repeats (a smoke test, well under a '
                        'minute); explicit options still win')
    a = p.parse_args(argv)
    try:
        a.components = [c.strip() for c in a.components.split(',') if c.strip()]
        for c in a.components:
            if c not in COMPONENTS:
                raise UsageError('unknown component %r (known: %s)' % (c, ', '.join(COMPONENTS)))
        if not a.components:
            raise UsageError('no components')
        a.collectives = [c.strip() for c in a.collective.split(',') if c.strip()]
        for c in a.collectives:
            if c not in COLLECTIVES:
                raise UsageError('unknown collective %r (known: %s)' % (c, ', '.join(COLLECTIVES)))
        if not a.collectives:
            raise UsageError('no collectives')
        if a.quick:
            a.sizes = a.sizes or QUICK['sizes']
            a.iters = a.iters or QUICK['iters']
            a.warmup = a.warmup or QUICK['warmup']
            a.repeat = a.repeat if a.repeat is not None else QUICK['repeat']
        a.sizes = a.sizes or '1:16M'
        a.repeat = 3 if a.repeat is None else a.repeat
        lo, sep, hi = a.sizes.partition(':')
        a.min_size, a.max_size = (parse_size(lo), parse_size(hi)) if sep else (1, parse_size(lo))
        if a.min_size < 1:
            raise UsageError('sizes start at 1 byte')
        if a.min_size > a.max_size:
            raise UsageError('--sizes: MIN %d > MAX %d' % (a.min_size, a.max_size))
        if a.max_size > 2**31 - 1:
            raise UsageError('--sizes: MAX above 2 GiB - 1')
        if a.np < 1:
            raise UsageError('--np must be at least 1')
        if a.repeat < 1:
            raise UsageError('--repeat must be at least 1')
        if a.timeout <= 0:
            raise UsageError('--timeout must be positive')
        if a.iters is not None:
            iter_spec(a.iters, '--iters')
        if a.warmup is not None:
            iter_spec(a.warmup, '--warmup')
        a.extra = []
        for item in a.extra_mca.split(','):
            if not item.strip():
                continue
            kv = item.split()
            if len(kv) != 2:
                raise UsageError('--extra-mca: %r is not "KEY VALUE"' % item.strip())
            a.extra += kv
        if a.component_dir is not None:
            a.component_dir = os.path.abspath(a.component_dir)
            if not os.path.isdir(a.component_dir):
                raise UsageError('--component-dir %s: no such directory' % a.component_dir)
            if not os.path.exists(os.path.join(a.component_dir, 'mca_coll_adapt2.so')) \
                    and 'adapt2' in a.components:
                raise UsageError('--component-dir %s has no mca_coll_adapt2.so' % a.component_dir)
        a.bench = find_bench(a)
    except UsageError as e:
        p.print_usage(sys.stderr)
        print('compare.py: error: %s' % e, file=sys.stderr)
        sys.exit(2)
    return a


def find_bench(a):
    if a.bench:
        cands = [a.bench]
    else:
        cands = [os.path.join(HERE, 'adapt2_bench')]
        if a.component_dir:
            cands.insert(0, os.path.join(os.path.dirname(a.component_dir), 'perf', 'adapt2_bench'))
        cands.append(os.path.join(os.getcwd(), 'perf', 'adapt2_bench'))
    for c in cands:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.abspath(c)
    raise UsageError('benchmark not found (tried %s); build it with make, or pass --bench'
                     % ', '.join(cands))


def pkglibdir():
    try:
        out = subprocess.run(['ompi_info', '--path', 'pkglibdir', '--parsable'],
                             capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        sys.exit('compare.py: ompi_info failed: %s' % e)
    m = re.search(r'^path:pkglibdir:(.+)$', out, re.M)
    if not m:
        sys.exit('compare.py: cannot read pkglibdir from ompi_info: %r' % out)
    return m.group(1).strip()


def mpirun_cmd(a, component, np, bench_args, libdir):
    cmd = [a.mpirun] + ALWAYS + ['-np', str(np)]
    for k, v in COMPONENTS[component]['mca']:
        cmd += ['--mca', k, v]
    if component == 'adapt2' and a.component_dir:
        cmd += ['--mca', 'mca_base_component_path', a.component_dir + ':' + libdir]
    for i in range(0, len(a.extra), 2):
        cmd += ['--mca', a.extra[i], a.extra[i + 1]]
    return cmd + [a.bench] + bench_args


def run_env():
    env = dict(os.environ)
    if hasattr(os, 'geteuid') and os.geteuid() == 0:
        env['OMPI_ALLOW_RUN_AS_ROOT'] = '1'
        env['OMPI_ALLOW_RUN_AS_ROOT_CONFIRM'] = '1'
    return env


def run(cmd, timeout):
    """Runs cmd in its own process group; (rc, stdout, stderr, seconds).
    rc None: timed out (the whole group is killed)."""
    t0 = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=run_env(), start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        return proc.returncode, out, err, time.time() - t0
    except subprocess.TimeoutExpired:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                out, err = proc.communicate(timeout=5)
                break
            except subprocess.TimeoutExpired:
                out, err = '', ''
        return None, out or '', err or '', time.time() - t0


def parse_bench(out):
    """Rows (dicts) from the benchmark's output, columns named by its
    '# size ...' header."""
    names, rows = None, []
    for line in out.splitlines():
        if line.startswith('# size '):
            names = line[1:].split()
        elif line.strip() and not line.startswith('#') and names:
            vals = line.split()
            if len(vals) != len(names):
                raise ValueError('bad line %r' % line)
            row = dict(zip(names, vals))
            rows.append({k: (int(v) if k in ('size', 'iters') else float(v))
                         for k, v in row.items()})
    if names is None or any(c not in names for c in COLUMNS):
        raise ValueError('no column header in the benchmark output')
    return rows


def preflight(a, libdir, logdir):
    """Checks, for every component that needs one, that its module is really
    enabled on MPI_COMM_WORLD (a wrong --component-dir would otherwise give
    Open MPI's default and ratios of 1)."""
    for comp in a.components:
        module = COMPONENTS[comp]['module']
        if not module:
            continue
        cmd = mpirun_cmd(a, comp, a.np, ['-k', a.collectives[0], '-m', '1', '-i', '1', '-x', '0'],
                         libdir)
        cmd[1:1] = ['--mca', 'coll_base_verbose', '10']
        print('[check] %s is selected ...' % comp, file=sys.stderr, flush=True)
        rc, out, err, _ = run(cmd, a.timeout)
        with open(os.path.join(logdir, 'check_%s.txt' % comp), 'w') as f:
            f.write('# command: %s\n%s\n# stderr:\n%s' % (shlex.join(cmd), out, err))
        pat = re.compile(r'selecting\s+%s, priority\s+\d+, Enabled' % re.escape(module))
        if rc != 0 or not pat.search(out + err):
            sys.exit('compare.py: %s is not selected (rc %s); see %s\n  command: %s' % (
                comp, 'timeout' if rc is None else rc,
                os.path.join(logdir, 'check_%s.txt' % comp), shlex.join(cmd)))


def spread(vals):
    return statistics.median(vals), min(vals), max(vals)


def geomean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float('nan')


def main(argv):
    a = parse_args(argv)
    t_start = time.time()
    libdir = pkglibdir()
    out_dir = a.out or os.path.join(HERE, 'results',
                                    datetime.datetime.now().strftime('%Y%m%d-%H%M%S'))
    logdir = os.path.join(out_dir, 'logs')
    os.makedirs(logdir, exist_ok=True)

    bench_common = ['-m', '%d:%d' % (a.min_size, a.max_size)]
    if a.iters:
        bench_common += ['-i', a.iters]
    if a.warmup:
        bench_common += ['-x', a.warmup]
    if a.validate:
        bench_common += ['-c']

    # (collective, component, label), deduplicated by label per collective.
    plan = []
    for coll in a.collectives:
        seen = set()
        for comp in a.components:
            lab = label(comp, coll)
            if lab not in seen:
                seen.add(lab)
                plan.append((coll, comp, lab))
    total = len(plan) * a.repeat

    print('# compare.py: bench=%s np=%d repeat=%d sizes=%s:%s components=%s collectives=%s%s'
          % (a.bench, a.np, a.repeat, human_size(a.min_size), human_size(a.max_size),
             ','.join(a.components), ','.join(a.collectives),
             ' component-dir=%s' % a.component_dir if a.component_dir else ''),
          file=sys.stderr)
    if not a.no_check:
        preflight(a, libdir, logdir)

    raw_path = os.path.join(out_dir, 'raw.csv')
    raw_fields = ['run', 'repeat', 'collective', 'component', 'np'] + list(COLUMNS) + \
                 list(OPTIONAL_COLUMNS) + ['wall_s', 'validate']
    raw = []          # dict rows
    # results[coll][label][size] -> list of (avg, last)
    results = {}
    n = 0
    failed = None
    with open(raw_path, 'w', newline='') as fraw:
        wr = csv.DictWriter(fraw, fieldnames=raw_fields, extrasaction='ignore')
        wr.writeheader()
        for rep in range(a.repeat):
            for coll, comp, lab in plan:
                n += 1
                cmd = mpirun_cmd(a, comp, a.np, ['-k', coll] + bench_common, libdir)
                print('[%d/%d] %s %s np=%d repeat %d/%d ...' % (n, total, lab, coll, a.np,
                      rep + 1, a.repeat), end='', file=sys.stderr, flush=True)
                rc, out, err, secs = run(cmd, a.timeout)
                log = os.path.join(logdir, '%02d_%s_%s_r%d.txt' % (n, coll, lab, rep + 1))
                with open(log, 'w') as f:
                    f.write('# command: %s\n# rc: %s, %.1f s\n%s\n# stderr:\n%s'
                            % (shlex.join(cmd), rc, secs, out, err))
                if rc != 0:
                    print(' FAILED', file=sys.stderr)
                    why = 'timed out after %.0f s' % a.timeout if rc is None else 'exit status %d' % rc
                    tail = '\n'.join((err.strip() or out.strip()).splitlines()[-15:])
                    failed = '%s %s repeat %d %s\n  command: %s\n  log: %s\n%s' % (
                        lab, coll, rep + 1, why, shlex.join(cmd), log, tail)
                    break
                try:
                    rows = parse_bench(out)
                except ValueError as e:
                    print(' FAILED', file=sys.stderr)
                    failed = '%s %s: cannot parse the output (%s); log: %s' % (lab, coll, e, log)
                    break
                print(' %.1f s' % secs, file=sys.stderr, flush=True)
                for r in rows:
                    row = dict(r, run=n, repeat=rep + 1, collective=coll, component=lab,
                               np=a.np, wall_s='%.2f' % secs, validate=int(a.validate))
                    wr.writerow(row)
                    raw.append(row)
                    results.setdefault(coll, {}).setdefault(lab, {}).setdefault(
                        r['size'], []).append({m: r.get(col, float('nan'))
                                               for m, col, _ in METRICS})
                fraw.flush()
            if failed:
                break
    if failed:
        print('compare.py: run failed: %s' % failed, file=sys.stderr)
        print('raw CSV so far: %s' % raw_path, file=sys.stderr)
        return 1

    summary_rows, pngs, closing = [], [], []
    for coll in a.collectives:
        labels = [lab for c, _, lab in plan if c == coll]
        summary_rows += print_tables(a, coll, labels, results[coll], closing)
        if not a.no_plot:
            png = plot(a, out_dir, coll, labels, results[coll])
            if png:
                pngs.append(png)

    sum_path = os.path.join(out_dir, 'summary.csv')
    with open(sum_path, 'w', newline='') as f:
        fields = ['collective', 'np', 'size', 'component', 'repeats']
        fields += ['%s_%s_us' % (m, k) for m, _, _ in METRICS for k in ('median', 'min', 'max')]
        fields += ['ratio_%s' % m for m, _, _ in METRICS] + ['reference']
        wr = csv.DictWriter(f, fieldnames=fields)
        wr.writeheader()
        wr.writerows(summary_rows)

    print()
    for line in closing:
        print(line)
    print()
    print('elapsed: %.0f s' % (time.time() - t_start))
    print('raw CSV:     %s' % raw_path)
    print('summary CSV: %s' % sum_path)
    for png in pngs:
        print('plot:        %s' % png)
    print('logs:        %s' % logdir)
    return 0


def print_tables(a, coll, labels, res, closing):
    ref = labels[0]
    others = labels[1:]
    sizes = sorted(set().union(*(res[lab].keys() for lab in labels)))
    # stats[lab, size][metric] = (median, min, max) over repeats, or None (no data)
    stats = {}
    for lab in labels:
        for s in sizes:
            runs = res[lab].get(s, [])
            if runs:
                st = {}
                for m, _, _ in METRICS:
                    vals = [r[m] for r in runs]
                    st[m] = None if any(math.isnan(v) for v in vals) else spread(vals)
                stats[lab, s] = st

    def value(lab, s, m):
        st = stats.get((lab, s))
        return st[m][0] if st and st[m] else None

    def ratio(o, s, m):
        num, den = value(ref, s, m), value(o, s, m)
        return num / den if num is not None and den else None

    summary = []
    for s in sizes:
        for lab in labels:
            if (lab, s) not in stats:
                continue
            row = {'collective': coll, 'np': a.np, 'size': s, 'component': lab,
                   'repeats': len(res[lab][s]), 'reference': ref}
            for m, _, _ in METRICS:
                st = stats[lab, s][m]
                for k, v in zip(('median', 'min', 'max'), st or ('', '', '')):
                    row['%s_%s_us' % (m, k)] = '%.3f' % v if st else ''
                if lab != ref:
                    r = ratio(lab, s, m)
                    row['ratio_%s' % m] = '%.4f' % r if r is not None else ''
            summary.append(row)

    def cell(t):
        if t is None:
            return '-'
        med, lo, hi = t
        return '%s [%s-%s]' % (fmt_us(med), fmt_us(lo), fmt_us(hi))

    for m, _, what in METRICS:
        if not any(st[m] for st in stats.values()):
            print()
            print('== %s np=%d, %s latency: no data (%s)' % (coll, a.np, m, what))
            continue
        print()
        print('== %s np=%d, %s latency in us: median [min-max] over %d repeats; '
              'ratio = %s/other (< 1: %s faster)' % (coll, a.np, m, a.repeat, ref, ref))
        print('   %s: %s' % (m, what))
        cells = {(lab, s): cell(stats[lab, s][m]) for (lab, s) in stats}
        w = max([len(c) for c in cells.values()] + [len(l) for l in labels]) + 2
        ratio_names = ['%s/%s' % (ref, o) for o in others]
        rw = [max(len(r) + 2, 8) for r in ratio_names]
        print('%8s' % 'size' + ''.join('%*s' % (w, lab) for lab in labels) +
              ''.join('%*s' % (x, r) for x, r in zip(rw, ratio_names)))
        for s in sizes:
            line = '%8s' % human_size(s)
            line += ''.join('%*s' % (w, cells.get((lab, s), '-')) for lab in labels)
            for o, x in zip(others, rw):
                r = ratio(o, s, m)
                line += '%*.2f' % (x, r) if r is not None else '%*s' % (x, '-')
            print(line)

    iec = human_size(RATIO_FROM)[:-1] + ' ' + human_size(RATIO_FROM)[-1] + 'iB'
    for o in others:
        common = [s for s in sizes if value(ref, s, 'avg') and value(o, s, 'avg')]
        big = [s for s in common if s >= RATIO_FROM]
        use, where = (big, 'over sizes >= %s' % iec) if big else \
            (common, 'over all sizes (none >= %s)' % iec)

        def gm(m, over):
            rs = [ratio(o, s, m) for s in over]
            rs = [r for r in rs if r]
            return '%.2f' % geomean(rs) if rs else 'n/a'
        closing.append('%s np=%d: %s/%s median ratio %s %s (last %s, span %s; all sizes: '
                       'avg %s; geometric mean of per-size ratios of medians over %d repeats)'
                       % (coll, a.np, ref, o, gm('avg', use), where, gm('last', use),
                          gm('span', use), gm('avg', common), a.repeat))
    return summary


def plot(a, out_dir, coll, labels, res):
    gp = os.path.join(HERE, 'plot.gp')
    if not shutil.which('gnuplot'):
        print('compare.py: gnuplot not found (Debian package gnuplot-nox): no plot',
              file=sys.stderr)
        return None
    if not os.path.exists(gp):
        print('compare.py: %s missing: no plot' % gp, file=sys.stderr)
        return None
    lat = os.path.join(out_dir, '%s_latency.dat' % coll)
    rat = os.path.join(out_dir, '%s_ratio.dat' % coll)
    ref = labels[0]
    with open(lat, 'w') as f:
        for lab in labels:
            for metric in ('avg', 'last'):
                f.write('"%s %s"\n' % (lab, metric))
                for s in sorted(res[lab]):
                    med, lo, hi = spread([r[metric] for r in res[lab][s]])
                    f.write('%d %.3f %.3f %.3f\n' % (s, med, lo, hi))
                f.write('\n\n')
    nrat = 0
    with open(rat, 'w') as f:
        for o in labels[1:]:
            for metric in ('avg', 'last'):
                f.write('"%s/%s %s"\n' % (ref, o, metric))
                for s in sorted(set(res[ref]) & set(res[o])):
                    den = statistics.median([r[metric] for r in res[o][s]])
                    if den > 0:
                        f.write('%d %.4f\n' % (s, statistics.median(
                            [r[metric] for r in res[ref][s]]) / den))
                f.write('\n\n')
                nrat += 1
    png = os.path.join(out_dir, '%s.png' % coll)
    title = '%s, np=%d, %d repeats (%s)' % (coll, a.np, a.repeat, ', '.join(labels))
    cmd = ['gnuplot', '-c', gp, lat, rat, png, title, str(2 * len(labels)), str(nrat), ref]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print('compare.py: gnuplot failed (%s): %s' % (shlex.join(cmd), r.stderr.strip()),
              file=sys.stderr)
        return None
    return png


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
