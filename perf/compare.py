#!/usr/bin/python3
"""Compare adapt2 with Open MPI's own collective components.

Runs perf/adapt2_bench (an OSU-style benchmark) once per component and
collective, interleaved run by run (A B C A B C ...) so that the drift of a
busy machine hits every component alike, repeats that --repeat times, and
prints per message size the median over repeats of each component's average
latency (OSU's number), of its "last" latency (per-iteration max, over the
ranks that receive the result, of the time in the call: every rank for bcast
and allreduce, the root for reduce) and of its end-to-end "span" (latest
return on a receiving rank minus the earliest call on a rank that has data;
one node only), their spread (min-max over repeats), and the ratios of the
first component (adapt2 by default) to each other one: a ratio < 1 means the
first component is faster.  It ends with one line per collective and other
component: the geometric mean of the ratios over sizes >= 64 KiB.

Collectives: bcast, ibcast, reduce, ireduce, allreduce, iallreduce (--op picks
the reduction op, --type the datatype; by default the benchmark's: char for
broadcasts, float for reductions, as OSU).  What each component stands for:
  tuned / libnbc  Open MPI's default: tuned for the blocking collectives,
                  libnbc for the non-blocking ones (whichever of the two names
                  is given, the run is labelled by what really runs);
  adapt           upstream coll/adapt (bcast, ibcast, reduce, ireduce only;
                  skipped, with a note, for the others, where its run would
                  just be tuned/libnbc again);
  han             coll/han (bcast, reduce, allreduce only; likewise);
  adapt2          this component.

Before the runs, a pre-flight run per component with --mca coll_base_verbose 10
checks that the component is really selected, and ompi_info tells whether
adapt2 has an algorithm parameter for each collective (if not, its calls fall
back to tuned/libnbc and a note says so); --no-check skips both.

  perf/compare.py --component-dir <builddir>/.libs            # the default run
  perf/compare.py --quick --component-dir <builddir>/.libs --validate
  perf/compare.py --collective reduce,allreduce --op max --component-dir ...

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
import types

HERE = os.path.dirname(os.path.abspath(__file__))

# What perf/adapt2_bench -k knows.
COLLECTIVES = ('bcast', 'ibcast', 'reduce', 'ireduce', 'allreduce', 'iallreduce')
NONBLOCKING = ('ibcast', 'ireduce', 'iallreduce')
REDUCTIONS = ('reduce', 'ireduce', 'allreduce', 'iallreduce')
OPS = ('sum', 'max', 'min', 'prod')
TYPES = ('char', 'int', 'float', 'double')

# How each component is selected.  "module": the coll module that must show up
# as "selecting <module>, ... Enabled" in the pre-flight check (None: Open
# MPI's default selection, nothing to check).  "implements": the collectives
# it has its own code for (None: all of them); for the others its run would
# measure Open MPI's default again, so it is skipped there.
COMPONENTS = {
    'adapt2': {'mca': [('coll_adapt2_priority', '100')], 'module': 'adapt2',
               'implements': None},
    'tuned': {'mca': [], 'module': None, 'implements': None},   # the default here
    'libnbc': {'mca': [], 'module': None, 'implements': None},  # the default for MPI_I*
    'adapt': {'mca': [('coll_adapt_priority', '100')], 'module': 'adapt',
              'implements': ('bcast', 'ibcast', 'reduce', 'ireduce')},
    'han': {'mca': [('coll_han_priority', '100')], 'module': 'han',
            'implements': ('bcast', 'reduce', 'allreduce')},
}
ALWAYS = ['--oversubscribe', '--bind-to', 'none', '--mca', 'mpi_yield_when_idle', '1']
RATIO_FROM = 64 * 1024              # summary line: sizes >= this
QUICK = {'sizes': '1:1M', 'iters': '50:20', 'warmup': '5:2', 'repeat': 2}
COLUMNS = ('size', 'avg_us', 'min_us', 'max_us', 'last_us', 'last_median_us', 'iters')
OPTIONAL_COLUMNS = ('span_us', 'span_median_us')
# The metrics compared: (name, benchmark column, meaning).  The plot shows the
# first two.
METRICS = (
    ('avg', 'avg_us', 'OSU average latency: per-rank mean over iterations, mean over ranks'),
    ('last', 'last_us', 'time until the last rank that receives the result has it (all '
                        'ranks; reduce: the root): per-iteration max over those ranks of '
                        'the time in the call, mean over iterations'),
    ('span', 'span_us', 'end to end: latest return on a receiving rank minus the earliest '
                        "call on a rank with data (bcast: the root's call), mean over "
                        'iterations (one node only)'),
)


class UsageError(Exception):
    pass


def label(component, collective):
    """Name of what actually runs: tuned has no non-blocking collectives, so
    the default for the MPI_I* ones is libnbc (and libnbc has no blocking
    ones)."""
    if component in ('tuned', 'libnbc'):
        return 'libnbc' if collective in NONBLOCKING else 'tuned'
    return component


def algorithm_param(collective):
    """adapt2's MCA parameter that chooses the algorithm of a collective (the
    non-blocking variant shares the blocking one's)."""
    base = collective[1:] if collective in NONBLOCKING else collective
    return 'coll_adapt2_%s_algorithm' % base


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


def comma_list(text, known, what):
    items = [c.strip() for c in text.split(',') if c.strip()]
    for c in items:
        if c not in known:
            raise UsageError('unknown %s %r (known: %s)' % (what, c, ', '.join(known)))
    if not items:
        raise UsageError('no %ss' % what)
    return items


def build_parser():
    p = argparse.ArgumentParser(
        prog='compare.py',
        description='Run perf/adapt2_bench for several coll components, interleaved, and '
                    'compare them (table on stdout, CSV and PNG under --out).',
        epilog='Ratios are first-component/other (adapt2/other by default): < 1 means the '
               'first component is faster. Components that have no code of their own for a '
               'collective (adapt, han) are skipped for it with a note. Example: '
               'perf/compare.py --quick --component-dir /tmp/build/.libs --validate '
               '--collective bcast,reduce,allreduce')
    p.add_argument('--components', default='adapt2,tuned,adapt',
                   help='comma list from %s (default: adapt2,tuned,adapt); the first one is '
                        'the reference of the ratios; tuned and libnbc both mean Open MPI\'s '
                        'default (tuned for blocking, libnbc for non-blocking collectives)'
                        % ','.join(COMPONENTS))
    p.add_argument('--collective', default='bcast',
                   help='comma list from %s (default: bcast)' % ','.join(COLLECTIVES))
    p.add_argument('--op', default='sum', choices=OPS,
                   help='reduction op of the reductions (default: sum, as OSU)')
    p.add_argument('--type', default=None, choices=TYPES,
                   help="datatype (benchmark -T; default: the benchmark's, char for "
                        'broadcasts and float for reductions, as OSU)')
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
                   help='skip the pre-flight checks (component selected, adapt2 algorithm '
                        'parameters)')
    p.add_argument('--no-plot', action='store_true', help='do not run gnuplot')
    p.add_argument('--quick', action='store_true',
                   help='few sizes, iterations and repeats (a smoke test, well under a '
                        'minute per collective); explicit options still win')
    return p


def apply_defaults(a):
    if a.quick:
        a.sizes = a.sizes or QUICK['sizes']
        a.iters = a.iters or QUICK['iters']
        a.warmup = a.warmup or QUICK['warmup']
        a.repeat = a.repeat if a.repeat is not None else QUICK['repeat']
    a.sizes = a.sizes or '1:16M'
    a.repeat = 3 if a.repeat is None else a.repeat


def check_numbers(a):
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


def check_paths(a):
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


def parse_args(argv):
    p = build_parser()
    a = p.parse_args(argv)
    try:
        a.components = comma_list(a.components, COMPONENTS, 'component')
        a.collectives = comma_list(a.collective, COLLECTIVES, 'collective')
        apply_defaults(a)
        check_numbers(a)
        check_paths(a)
        a.plan, a.notes = build_plan(a)
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


def mpirun_cmd(a, component, np, args, libdir):
    cmd = [a.mpirun] + ALWAYS + ['-np', str(np)]
    for k, v in COMPONENTS[component]['mca']:
        cmd += ['--mca', k, v]
    if component == 'adapt2' and a.component_dir:
        cmd += ['--mca', 'mca_base_component_path', a.component_dir + ':' + libdir]
    for i in range(0, len(a.extra), 2):
        cmd += ['--mca', a.extra[i], a.extra[i + 1]]
    return cmd + [a.bench] + args


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


def parse_meta(out):
    """The key=value pairs of the benchmark's '# adapt2_bench ...' line."""
    for line in out.splitlines():
        if line.startswith('# adapt2_bench '):
            return dict(kv.split('=', 1) for kv in line.split()[2:] if '=' in kv)
    return {}


def bench_args(a, coll):
    """The benchmark's arguments for one collective."""
    args = ['-k', coll, '-m', '%d:%d' % (a.min_size, a.max_size)]
    if a.iters:
        args += ['-i', a.iters]
    if a.warmup:
        args += ['-x', a.warmup]
    if a.validate:
        args += ['-c']
    if a.type:
        args += ['-T', a.type]
    if coll in REDUCTIONS:
        args += ['-o', a.op]
    return args


def build_plan(a):
    """[(collective, component, label)], one entry per label and collective,
    without the components that have no code for a collective; and notes."""
    plan, notes = [], []
    for coll in a.collectives:
        seen = []
        for comp in a.components:
            impl = COMPONENTS[comp]['implements']
            if impl is not None and coll not in impl:
                notes.append('%s implements no %s (its run would just be %s again): skipped '
                             'for %s' % (comp, coll, label('tuned', coll), coll))
                continue
            lab = label(comp, coll)
            if lab not in seen:
                seen.append(lab)
                plan.append((coll, comp, lab))
        if len(seen) == 1:
            notes.append('%s: only %s runs, nothing to compare with' % (coll, seen[0]))
    if not plan:
        raise UsageError('no component runs any of the collectives %s'
                         % ','.join(a.collectives))
    return plan, notes


def preflight(a, plan, env):
    """Checks, for every component that needs one, that its module is really
    enabled on MPI_COMM_WORLD (a wrong --component-dir would otherwise give
    Open MPI's default and ratios of 1)."""
    first = {}
    for coll, comp, _ in plan:
        first.setdefault(comp, coll)
    for comp, coll in first.items():
        module = COMPONENTS[comp]['module']
        if not module:
            continue
        cmd = mpirun_cmd(a, comp, a.np, bench_args(a, coll)[:2] +
                         ['-m', '8', '-i', '1', '-x', '0'], env.libdir)
        cmd[1:1] = ['--mca', 'coll_base_verbose', '10']
        print('[check] %s is selected ...' % comp, file=sys.stderr, flush=True)
        rc, out, err, _ = run(cmd, a.timeout)
        log = os.path.join(env.logdir, 'check_%s.txt' % comp)
        with open(log, 'w') as f:
            f.write('# command: %s\n%s\n# stderr:\n%s' % (shlex.join(cmd), out, err))
        pat = re.compile(r'selecting\s+%s, priority\s+\d+, Enabled' % re.escape(module))
        if rc != 0 or not pat.search(out + err):
            sys.exit('compare.py: %s is not selected (rc %s); see %s\n  command: %s' % (
                comp, 'timeout' if rc is None else rc, log, shlex.join(cmd)))


def adapt2_coverage(a, plan, env):
    """Notes for the collectives adapt2 registers no algorithm parameter for:
    its module is selected, but those calls go to its fallback (tuned or
    libnbc), so the ratios say nothing about adapt2."""
    colls = [coll for coll, comp, _ in plan if comp == 'adapt2']
    if not colls:
        return []
    cmd = ['ompi_info', '--param', 'coll', 'adapt2', '--level', '9', '--parsable']
    run_env_ = dict(os.environ)
    if a.component_dir:  # ompi_info ignores --mca mca_base_component_path; not the env
        run_env_['OMPI_MCA_mca_base_component_path'] = a.component_dir + ':' + env.libdir
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60,
                             env=run_env_).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        return ['adapt2: cannot run ompi_info (%s): implemented collectives unknown' % e]
    return ['adapt2 registers no %s: its %s presumably falls back to %s (ratio ~1)'
            % (algorithm_param(c), c, label('tuned', c))
            for c in colls if (':param:%s:' % algorithm_param(c)) not in out]


def run_one(a, env, n, total, rep, coll, comp, lab):
    """One mpirun; (rows, None) or (None, why it failed)."""
    cmd = mpirun_cmd(a, comp, a.np, bench_args(a, coll), env.libdir)
    print('[%d/%d] %s %s np=%d repeat %d/%d ...' % (n, total, lab, coll, a.np,
          rep + 1, a.repeat), end='', file=sys.stderr, flush=True)
    rc, out, err, secs = run(cmd, a.timeout)
    log = os.path.join(env.logdir, '%02d_%s_%s_r%d.txt' % (n, coll, lab, rep + 1))
    with open(log, 'w') as f:
        f.write('# command: %s\n# rc: %s, %.1f s\n%s\n# stderr:\n%s'
                % (shlex.join(cmd), rc, secs, out, err))
    if rc != 0:
        print(' FAILED', file=sys.stderr)
        why = 'timed out after %.0f s' % a.timeout if rc is None else 'exit status %d' % rc
        tail = '\n'.join((err.strip() or out.strip()).splitlines()[-15:])
        return None, '%s %s repeat %d %s\n  command: %s\n  log: %s\n%s' % (
            lab, coll, rep + 1, why, shlex.join(cmd), log, tail)
    try:
        rows = parse_bench(out)
    except ValueError as e:
        print(' FAILED', file=sys.stderr)
        return None, '%s %s: cannot parse the output (%s); log: %s' % (lab, coll, e, log)
    print(' %.1f s' % secs, file=sys.stderr, flush=True)
    meta = parse_meta(out)
    env.meta.setdefault(coll, meta)
    extra = dict(run=n, repeat=rep + 1, collective=coll, component=lab, np=a.np,
                 type=meta.get('type', ''), op=meta.get('op', '-').strip('-'),
                 wall_s='%.2f' % secs, validate=int(a.validate))
    return [dict(r, **extra) for r in rows], None


def run_matrix(a, plan, env):
    """All runs, interleaved; fills env.results[coll][label][size] with one
    {metric: value} per repeat and writes raw.csv.  None, or why it failed."""
    fields = ['run', 'repeat', 'collective', 'component', 'np', 'type', 'op'] + \
        list(COLUMNS) + list(OPTIONAL_COLUMNS) + ['wall_s', 'validate']
    total, n = len(plan) * a.repeat, 0
    with open(env.raw_path, 'w', newline='') as fraw:
        wr = csv.DictWriter(fraw, fieldnames=fields, extrasaction='ignore')
        wr.writeheader()
        for rep in range(a.repeat):
            for coll, comp, lab in plan:
                n += 1
                rows, failed = run_one(a, env, n, total, rep, coll, comp, lab)
                if failed:
                    return failed
                for r in rows:
                    wr.writerow(r)
                    env.results.setdefault(coll, {}).setdefault(lab, {}).setdefault(
                        r['size'], []).append({m: r.get(col, float('nan'))
                                               for m, col, _ in METRICS})
                fraw.flush()
    return None


def setup(a):
    out_dir = a.out or os.path.join(HERE, 'results',
                                    datetime.datetime.now().strftime('%Y%m%d-%H%M%S'))
    env = types.SimpleNamespace(t_start=time.time(), libdir=pkglibdir(), out_dir=out_dir,
                                logdir=os.path.join(out_dir, 'logs'),
                                raw_path=os.path.join(out_dir, 'raw.csv'),
                                sum_path=os.path.join(out_dir, 'summary.csv'),
                                results={}, meta={})
    os.makedirs(env.logdir, exist_ok=True)
    return env


def print_notes(notes):
    for note in notes:
        print('compare.py: note: %s' % note, file=sys.stderr)


def summarize(a, plan, env):
    """Tables on stdout, PNGs; (summary rows, closing lines, PNG paths)."""
    rows, closing, pngs = [], [], []
    for coll in a.collectives:
        labels = [lab for c, _, lab in plan if c == coll]
        if not labels:
            continue
        rows += print_tables(a, coll, labels, env.results[coll], closing,
                             env.meta.get(coll, {}))
        if not a.no_plot:
            png = plot(a, env, coll, labels)
            if png:
                pngs.append(png)
    return rows, closing, pngs


def write_summary(env, rows):
    with open(env.sum_path, 'w', newline='') as f:
        fields = ['collective', 'np', 'type', 'op', 'size', 'component', 'repeats']
        fields += ['%s_%s_us' % (m, k) for m, _, _ in METRICS for k in ('median', 'min', 'max')]
        fields += ['ratio_%s' % m for m, _, _ in METRICS] + ['reference']
        wr = csv.DictWriter(f, fieldnames=fields)
        wr.writeheader()
        wr.writerows(rows)


def print_footer(env, closing, notes, pngs):
    print()
    for line in closing + ['note: %s' % n for n in notes]:
        print(line)
    print()
    print('elapsed: %.0f s' % (time.time() - env.t_start))
    print('raw CSV:     %s' % env.raw_path)
    print('summary CSV: %s' % env.sum_path)
    for png in pngs:
        print('plot:        %s' % png)
    print('logs:        %s' % env.logdir)


def main(argv):
    a = parse_args(argv)
    plan, notes = a.plan, list(a.notes)
    env = setup(a)
    print('# compare.py: bench=%s np=%d repeat=%d sizes=%s:%s components=%s collectives=%s '
          'op=%s%s%s' % (a.bench, a.np, a.repeat, human_size(a.min_size),
                         human_size(a.max_size), ','.join(a.components),
                         ','.join(a.collectives), a.op, ' type=%s' % a.type if a.type else '',
                         ' component-dir=%s' % a.component_dir if a.component_dir else ''),
          file=sys.stderr)
    if not a.no_check:
        preflight(a, plan, env)
        notes += adapt2_coverage(a, plan, env)
    print_notes(notes)
    failed = run_matrix(a, plan, env)
    if failed:
        print('compare.py: run failed: %s' % failed, file=sys.stderr)
        print('raw CSV so far: %s' % env.raw_path, file=sys.stderr)
        return 1
    rows, closing, pngs = summarize(a, plan, env)
    write_summary(env, rows)
    print_footer(env, closing, notes, pngs)
    return 0


def spread(vals):
    return statistics.median(vals), min(vals), max(vals)


def geomean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float('nan')


class Stats:
    """Medians and spreads over repeats of one collective's runs, and the
    ratios of the reference (the first label) to the others."""

    def __init__(self, labels, res):
        self.labels, self.ref, self.others = labels, labels[0], labels[1:]
        self.res = res
        self.sizes = sorted(set().union(*(res[lab].keys() for lab in labels)))
        # st[lab, size][metric] = (median, min, max) over repeats, or None (no data)
        self.st = {}
        for lab in labels:
            for s in self.sizes:
                runs = res[lab].get(s, [])
                if runs:
                    self.st[lab, s] = {
                        m: None if any(math.isnan(r[m]) for r in runs)
                        else spread([r[m] for r in runs]) for m, _, _ in METRICS}

    def value(self, lab, s, m):
        st = self.st.get((lab, s))
        return st[m][0] if st and st[m] else None

    def ratio(self, o, s, m):
        num, den = self.value(self.ref, s, m), self.value(o, s, m)
        return num / den if num is not None and den else None


def describe(meta):
    """'float, op sum' from the benchmark's header, or ''."""
    parts = []
    if meta.get('type'):
        parts.append(meta['type'])
    if meta.get('op', '-') != '-':
        parts.append('op %s' % meta['op'])
    return ', '.join(parts)


def summary_rows(a, coll, stats, meta):
    rows = []
    for s in stats.sizes:
        for lab in stats.labels:
            if (lab, s) not in stats.st:
                continue
            row = {'collective': coll, 'np': a.np, 'size': s, 'component': lab,
                   'repeats': len(stats.res[lab][s]), 'reference': stats.ref,
                   'type': meta.get('type', ''), 'op': meta.get('op', '-').strip('-')}
            for m, _, _ in METRICS:
                st = stats.st[lab, s][m]
                for k, v in zip(('median', 'min', 'max'), st or ('', '', '')):
                    row['%s_%s_us' % (m, k)] = '%.3f' % v if st else ''
                if lab != stats.ref:
                    r = stats.ratio(lab, s, m)
                    row['ratio_%s' % m] = '%.4f' % r if r is not None else ''
            rows.append(row)
    return rows


def cell(t):
    if t is None:
        return '-'
    med, lo, hi = t
    return '%s [%s-%s]' % (fmt_us(med), fmt_us(lo), fmt_us(hi))


def print_metric_table(a, coll, stats, m, what, desc):
    ref, labels = stats.ref, stats.labels
    title = '%s np=%d%s' % (coll, a.np, ' (%s)' % desc if desc else '')
    print()
    if not any(st[m] for st in stats.st.values()):
        print('== %s, %s latency: no data (%s)' % (title, m, what))
        return
    print('== %s, %s latency in us: median [min-max] over %d repeats; '
          'ratio = %s/other (< 1: %s faster)' % (title, m, a.repeat, ref, ref))
    print('   %s: %s' % (m, what))
    cells = {k: cell(st[m]) for k, st in stats.st.items()}
    w = max([len(c) for c in cells.values()] + [len(l) for l in labels]) + 2
    ratio_names = ['%s/%s' % (ref, o) for o in stats.others]
    rw = [max(len(r) + 2, 8) for r in ratio_names]
    print('%8s' % 'size' + ''.join('%*s' % (w, lab) for lab in labels) +
          ''.join('%*s' % (x, r) for x, r in zip(rw, ratio_names)))
    for s in stats.sizes:
        line = '%8s' % human_size(s)
        line += ''.join('%*s' % (w, cells.get((lab, s), '-')) for lab in labels)
        for o, x in zip(stats.others, rw):
            r = stats.ratio(o, s, m)
            line += '%*.2f' % (x, r) if r is not None else '%*s' % (x, '-')
        print(line)


def closing_lines(a, coll, stats, desc):
    """Per other component: geometric mean of the per-size ratios."""
    iec = human_size(RATIO_FROM)[:-1] + ' ' + human_size(RATIO_FROM)[-1] + 'iB'
    lines = []
    for o in stats.others:
        common = [s for s in stats.sizes
                  if stats.value(stats.ref, s, 'avg') and stats.value(o, s, 'avg')]
        big = [s for s in common if s >= RATIO_FROM]
        use, where = (big, 'over sizes >= %s' % iec) if big else \
            (common, 'over all sizes (none >= %s)' % iec)

        def gm(m, over):
            rs = [r for r in (stats.ratio(o, s, m) for s in over) if r]
            return '%.2f' % geomean(rs) if rs else 'n/a'
        lines.append('%s np=%d: %s/%s median ratio %s %s (last %s, span %s; all sizes: '
                     'avg %s; geometric mean of per-size ratios of medians over %d repeats%s)'
                     % (coll, a.np, stats.ref, o, gm('avg', use), where, gm('last', use),
                        gm('span', use), gm('avg', common), a.repeat,
                        '; %s' % desc if desc else ''))
    return lines


def print_tables(a, coll, labels, res, closing, meta=None):
    """Prints one table per metric, appends the ratio lines to closing and
    returns the summary CSV rows."""
    meta = meta or {}
    stats = Stats(labels, res)
    desc = describe(meta)
    for m, _, what in METRICS:
        print_metric_table(a, coll, stats, m, what, desc)
    closing += closing_lines(a, coll, stats, desc)
    return summary_rows(a, coll, stats, meta)


def plot(a, env, coll, labels):
    gp = os.path.join(HERE, 'plot.gp')
    if not shutil.which('gnuplot'):
        print('compare.py: gnuplot not found (Debian package gnuplot-nox): no plot',
              file=sys.stderr)
        return None
    if not os.path.exists(gp):
        print('compare.py: %s missing: no plot' % gp, file=sys.stderr)
        return None
    res = env.results[coll]
    lat, nlat = write_latency_dat(env.out_dir, coll, labels, res)
    rat, nrat = write_ratio_dat(env.out_dir, coll, labels, res)
    png = os.path.join(env.out_dir, '%s.png' % coll)
    desc = describe(env.meta.get(coll, {}))
    title = '%s, np=%d, %d repeats (%s)%s' % (coll, a.np, a.repeat, ', '.join(labels),
                                              ', %s' % desc if desc else '')
    cmd = ['gnuplot', '-c', gp, lat, rat, png, title, str(nlat), str(nrat), labels[0]]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print('compare.py: gnuplot failed (%s): %s' % (shlex.join(cmd), r.stderr.strip()),
              file=sys.stderr)
        return None
    return png


def write_latency_dat(out_dir, coll, labels, res):
    lat = os.path.join(out_dir, '%s_latency.dat' % coll)
    with open(lat, 'w') as f:
        for lab in labels:
            for metric in ('avg', 'last'):
                f.write('"%s %s"\n' % (lab, metric))
                for s in sorted(res[lab]):
                    med, lo, hi = spread([r[metric] for r in res[lab][s]])
                    f.write('%d %.3f %.3f %.3f\n' % (s, med, lo, hi))
                f.write('\n\n')
    return lat, 2 * len(labels)


def write_ratio_dat(out_dir, coll, labels, res):
    rat = os.path.join(out_dir, '%s_ratio.dat' % coll)
    ref, nrat = labels[0], 0
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
    return rat, nrat


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
