#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
"""Compare adapt2 with Open MPI's own collective components.

Runs perf/adapt2_bench (an OSU-style benchmark) once per component and
collective, interleaved run by run, the order rotated every repeat (A B C,
B C A, C A B, ...) so that the drift of a busy machine, and whatever a run
inherits from the one before it, hits every component alike, repeats that
--repeat times, and prints per message size the median over repeats of
each component's average latency (OSU's number), of its "last" latency (per-iteration max, over the
ranks that receive the result, of the time in the call: every rank for bcast,
allreduce, allgather and reduce_scatter_block, the root for reduce) and of its
end-to-end "span" (latest return on a receiving rank minus the earliest call
on a rank that has data; one node only), their spread (min-max over
repeats), and the ratios of the first component (adapt2 by default) to each
other one: a ratio < 1 means the first component is faster, and to the best
other one (the fastest other component's median at that size).  It ends with one line per collective and
other component: the geometric mean of the ratios over sizes >= 64 KiB, and
one "<collective> np=N: adapt2/best-other ..." line (geometric means over
sizes >= 64 KiB and over all sizes).

Collectives: adapt2's, read from ompi/mca/coll/adapt2/collectives.def (the
registry), each blocking and non-blocking (i*), in that file's order: bcast,
ibcast, reduce, ireduce, allreduce, iallreduce, allgather, iallgather,
reduce_scatter_block, ireduce_scatter_block as of this writing.  The
reductions are those whose name contains "reduce" (--op picks the op);
--type the datatype (by default the benchmark's, as OSU: char for
broadcasts and allgathers, float for reductions).  A size is per rank where
each rank has its own block: allgather: the bytes each rank contributes (the
send count), reduce_scatter_block: the bytes of each rank's result block (the
recvcount).  What each component stands for:
  tuned / libnbc  Open MPI's default: tuned for the blocking collectives,
                  libnbc for the non-blocking ones (whichever of the two names
                  is given, the run is labelled by what really runs);
  adapt           upstream coll/adapt (bcast, ibcast, reduce, ireduce only;
                  skipped, with a note, for the others, where its run would
                  just be tuned/libnbc again);
  han             coll/han (bcast, reduce, allreduce, allgather only, all
                  blocking; likewise; Open MPI 4.1's han disqualifies itself
                  on a communicator within one node: the pre-flight check
                  then stops the run);
  adapt2          this component.

Variants (--variant LABEL=COMPONENT:ITEM,ITEM..., repeatable, both modes):
a component run with extra MCA parameters (ITEM KEY=VALUE: --mca KEY VALUE)
and/or extra benchmark arguments (ITEM starting with '-', e.g. -t for
MPI_THREAD_MULTIPLE), labelled LABEL, run interleaved and compared like one
more component:
  --variant adapt2-nodetach=adapt2:coll_adapt2_detach_max_message=0
  --variant adapt2-pt=adapt2:coll_adapt2_progress_thread=1,-t

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

Noise mode ("compare.py noise ...", see compare.py noise --help): runs
perf/noise_bench (compute + injected noise + a collective, no barriers; once
without and once with noise) for each component, interleaved, over
collectives, sizes, rank counts, noise settings and seeds, and compares how
much of the injected noise each component amplifies (medians, spread, ratios,
DIR/noise_raw.csv, DIR/noise_summary.csv, DIR/noise_*.png via
perf/plot_noise.gp), and what the runs cost: process CPU time per rank, and
for adapt2 and its variants (MPI_T counters) the calls that completed early
(decoupled completion), the bytes copied for that, the calls refused at the
cap and the progress thread's CPU time.

  perf/compare.py noise --quick --component-dir <builddir>/.libs
  perf/compare.py noise --collective bcast,reduce --sizes 4K,1M --np 4,8 \
      --noise p=0.1,d=5ms --noise periodic:d=5ms,every=50ms --component-dir ...

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

COLLECTIVES_DEF = os.path.join(HERE, '..', 'ompi', 'mca', 'coll', 'adapt2',
                               'collectives.def')


def adapt2_collectives(path=COLLECTIVES_DEF):
    """The names of adapt2's collectives, in the registry's order: the first
    arguments of its ADAPT2_COLLECTIVE(name, NAME) lines (comments ignored)."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        sys.exit('compare.py: cannot read adapt2\'s collectives: %s' % e)
    text = re.sub(r'/\*.*?\*/|//[^\n]*', '', text, flags=re.S)
    names = re.findall(r'\bADAPT2_COLLECTIVE\(\s*(\w+)\s*,\s*\w+\s*\)', text)
    if not names:
        sys.exit('compare.py: no ADAPT2_COLLECTIVE(name, NAME) line in %s' % path)
    return names


# What perf/adapt2_bench -k knows: adapt2's collectives, each blocking and
# non-blocking (i*); the reductions are the ones named *reduce*.
ADAPT2_NAMES = adapt2_collectives()
COLLECTIVES = tuple(c for name in ADAPT2_NAMES for c in (name, 'i' + name))
NONBLOCKING = tuple('i' + name for name in ADAPT2_NAMES)
REDUCTIONS = tuple(c for c in COLLECTIVES if 'reduce' in c)
# What perf/noise_bench -k knows (not every one of adapt2's collectives).
NOISE_COLLECTIVES = ('bcast', 'ibcast', 'reduce', 'ireduce', 'allreduce', 'iallreduce')
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
            'implements': ('bcast', 'reduce', 'allreduce', 'allgather')},
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


VARIANT_HELP = (
    'a labelled variant of a component, run and compared like one more component '
    '(repeatable): LABEL=COMPONENT[:ITEM[,ITEM...]], ITEM either KEY=VALUE (an MCA '
    'parameter: --mca KEY VALUE for this variant\'s runs; it replaces the same key of '
    'the component\'s own or --extra-mca) or a benchmark argument starting with "-" '
    '(appended to the benchmark\'s command line; a value attached, e.g. -t or -P500). '
    'Variants join the end of --components unless their LABEL is listed there (then '
    'they take that place; the first one is the reference of the ratios). Examples: '
    'adapt2-nodetach=adapt2:coll_adapt2_detach_max_message=0; '
    'adapt2-pt=adapt2:coll_adapt2_progress_thread=1,-t. LABEL: letters, digits, '
    '"_.+-", not a component name')


def parse_variant(text):
    """'LABEL=COMPONENT[:ITEM,...]' -> (label, base, [(key, value)], [bench args])."""
    lab, sep, rest = text.strip().partition('=')
    if not sep or not re.fullmatch(r'[A-Za-z0-9_.+-]+', lab):
        raise UsageError('--variant %r: want LABEL=COMPONENT[:ITEM,...] (LABEL: letters, '
                         'digits, "_.+-")' % text)
    if lab in COMPONENTS:
        raise UsageError('--variant %r: label %r is a component name' % (text, lab))
    m = re.match(r'([A-Za-z0-9_]+)(?:[:,]|$)', rest)
    if not m or m.group(1) not in COMPONENTS:
        raise UsageError('--variant %r: unknown component %r (known: %s)'
                         % (text, re.split('[:,]', rest)[0], ', '.join(COMPONENTS)))
    base, mca, args = m.group(1), [], []
    for item in rest[m.end():].split(','):
        item = item.strip()
        if not item:
            continue
        if item.startswith('-'):
            if len(item) < 2 or re.search(r'\s', item):
                raise UsageError('--variant %r: bad benchmark argument %r' % (text, item))
            args.append(item)
            continue
        k, sep, v = item.partition('=')
        if not sep or not re.fullmatch(r'[A-Za-z0-9_]+', k) or not v or re.search(r'\s', v):
            raise UsageError('--variant %r: %r is neither KEY=VALUE nor a benchmark argument '
                             '(-X)' % (text, item))
        if k in [x for x, _ in mca]:
            raise UsageError('--variant %r: %s given twice' % (text, k))
        mca.append((k, v))
    return lab, base, mca, args


def resolve_components(a):
    """a.components (labels, in run order) and a.table (label -> what runs:
    base component, its MCA pairs, the variant's MCA pairs and benchmark
    arguments, module, implements) from --components and --variant."""
    variants = {}
    for text in a.variant or []:
        lab, base, mca, args = parse_variant(text)
        if lab in variants:
            raise UsageError('--variant: label %r given twice' % lab)
        variants[lab] = dict(COMPONENTS[base], base=base, variant_mca=mca, args=args)
    known = list(COMPONENTS) + list(variants)
    comps = comma_list(a.components, known, 'component')
    if len(set(comps)) != len(comps):
        raise UsageError('--components: a component is listed twice')
    a.components = comps + [v for v in variants if v not in comps]
    a.table = {c: dict(COMPONENTS[c], base=c, variant_mca=[], args=[]) for c in COMPONENTS}
    a.table.update(variants)


def base_of(a, comp):
    return a.table[comp]['base']


def variants_text(a):
    """' variants=LABEL=...;...' for the run's header line, or ''."""
    return ' variants=%s' % ';'.join(a.variant) if a.variant else ''


def add_run_options(p, bench, timeout, out_prefix):
    """The options of a run that both modes share (where the component and the
    benchmark are, extra MCA pairs, limits, output)."""
    p.add_argument('--component-dir', metavar='DIR', default=None,
                   help="directory holding mca_coll_adapt2.so (e.g. <builddir>/.libs), "
                        "searched before Open MPI's own; default: the installed adapt2")
    p.add_argument('--bench', metavar='PATH', default=None,
                   help='the benchmark (default: perf/%s next to this script, '
                        'else <component-dir>/../perf/%s)' % (bench, bench))
    p.add_argument('--extra-mca', metavar='"K V,K V"', default='',
                   help='more --mca pairs for every run')
    p.add_argument('--timeout', type=float, default=timeout,
                   help='seconds allowed per mpirun (default %d)' % timeout)
    p.add_argument('--out', metavar='DIR', default=None,
                   help='results directory (default perf/results/%s<timestamp>)' % out_prefix)
    p.add_argument('--mpirun', default='mpirun', help='mpirun to use (default: mpirun)')
    p.add_argument('--no-check', action='store_true',
                   help='skip the pre-flight checks (component selected, adapt2 algorithm '
                        'parameters)')
    p.add_argument('--no-plot', action='store_true', help='do not run gnuplot')


def build_parser():
    p = argparse.ArgumentParser(
        prog='compare.py',
        description='Run perf/adapt2_bench for several coll components, interleaved, and '
                    'compare them (table on stdout, CSV and PNG under --out).',
        epilog='Ratios are first-component/other (adapt2/other by default): < 1 means the '
               'first component is faster; best-other: first component / the fastest other '
               'one at each size (variants of the first component\'s own component are '
               'not candidates for best-other). Components that have no code of their own '
               'for a collective (adapt, han) are skipped for it with a note. Example: '
               'perf/compare.py --quick --component-dir /tmp/build/.libs --validate '
               '--collective bcast,reduce,allreduce. This is the latency mode '
               '("compare.py [latency] ..."); the noise-absorption mode is '
               '"compare.py noise ..." (see compare.py noise --help).')
    p.add_argument('--components', default='adapt2,tuned,adapt',
                   help='comma list from %s (default: adapt2,tuned,adapt); the first one is '
                        'the reference of the ratios; tuned and libnbc both mean Open MPI\'s '
                        'default (tuned for blocking, libnbc for non-blocking collectives)'
                        % ','.join(COMPONENTS))
    p.add_argument('--variant', action='append', metavar='LABEL=COMPONENT:ITEM,...',
                   help=VARIANT_HELP)
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
    add_run_options(p, 'adapt2_bench', 600, '')
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


def check_paths(a, bench_name='adapt2_bench'):
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
                and 'adapt2' in [base_of(a, c) for c in a.components]:
            raise UsageError('--component-dir %s has no mca_coll_adapt2.so' % a.component_dir)
    a.bench = find_bench(a, bench_name)


def parse_args(argv):
    p = build_parser()
    a = p.parse_args(argv)
    try:
        resolve_components(a)
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


def find_bench(a, name='adapt2_bench'):
    if a.bench:
        cands = [a.bench]
    else:
        cands = [os.path.join(HERE, name)]
        if a.component_dir:
            cands.insert(0, os.path.join(os.path.dirname(a.component_dir), 'perf', name))
        cands.append(os.path.join(os.getcwd(), 'perf', name))
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
    """mpirun for one run of `component` (a component or a variant's label):
    its MCA pairs, --extra-mca, then the variant's (a later value of a key
    replaces an earlier one: Open MPI would join repeated keys with commas);
    the variant's benchmark arguments go after args."""
    spec = a.table[component]
    pairs = list(spec['mca'])
    if spec['base'] == 'adapt2' and a.component_dir:
        pairs.append(('mca_base_component_path', a.component_dir + ':' + libdir))
    pairs += [(a.extra[i], a.extra[i + 1]) for i in range(0, len(a.extra), 2)]
    pairs += spec['variant_mca']
    mca = {}
    for k, v in pairs:
        mca.pop(k, None)
        mca[k] = v
    cmd = [a.mpirun] + ALWAYS + ['-np', str(np)]
    for k, v in mca.items():
        cmd += ['--mca', k, v]
    return cmd + [a.bench] + args + spec['args']


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
            impl = a.table[comp]['implements']
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
        module = a.table[comp]['module']
        if not module:
            continue
        cmd = mpirun_cmd(a, comp, a.np, ['-k', coll, '-m', '8', '-i', '1', '-x', '0'],
                         env.libdir)
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
    libnbc), so the ratios say nothing about adapt2.  Exits if a variant
    names an MCA parameter ompi_info does not know."""
    colls = sorted(set(coll for coll, comp, _ in plan if base_of(a, comp) == 'adapt2'),
                   key=a.collectives.index)
    keys = sorted(set(k for _, comp, _ in plan for k, _ in a.table[comp]['variant_mca']))
    if not colls and not keys:
        return []
    cmd = ['ompi_info', '--param', 'all', 'all', '--level', '9', '--parsable']
    run_env_ = dict(os.environ)
    if a.component_dir:  # ompi_info ignores --mca mca_base_component_path; not the env
        run_env_['OMPI_MCA_mca_base_component_path'] = a.component_dir + ':' + env.libdir
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60,
                             env=run_env_).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        return ['adapt2: cannot run ompi_info (%s): implemented collectives and variant '
                'parameters unchecked' % e]
    # A misspelt parameter would be ignored and the variant would measure its
    # component again.
    unknown = [k for k in keys if (':param:%s:' % k) not in out]
    if unknown:
        sys.exit('compare.py: --variant: ompi_info knows no MCA parameter %s (--no-check '
                 'skips this check)' % ', '.join(unknown))
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


def rotated(items, by):
    """items starting at position `by` (mod their count), wrapping around."""
    k = by % len(items) if items else 0
    return items[k:] + items[:k]


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
            # Rotated: a fixed order gave the first variant of every round a
            # steady 5-8% handicap on 4 ranks sharing 2 cores (two variants
            # running the same algorithm, 5 of 5 repeats apart).
            for coll, comp, lab in rotated(plan, rep):
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
        fields += ['%s_%s' % (k, m) for m, _, _ in METRICS for k in ('best_other', 'ratio_best')]
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
    if argv[:1] == ['noise']:
        return noise_main(argv[1:])
    if argv[:1] == ['latency']:
        argv = argv[1:]
    a = parse_args(argv)
    plan, notes = a.plan, list(a.notes)
    env = setup(a)
    print('# compare.py: bench=%s np=%d repeat=%d sizes=%s:%s components=%s collectives=%s '
          'op=%s%s%s%s' % (a.bench, a.np, a.repeat, human_size(a.min_size),
                           human_size(a.max_size), ','.join(a.components),
                           ','.join(a.collectives), a.op, ' type=%s' % a.type if a.type else '',
                           ' component-dir=%s' % a.component_dir if a.component_dir else '',
                           variants_text(a)),
          file=sys.stderr)
    if not a.no_check:
        notes += adapt2_coverage(a, plan, env)
        preflight(a, plan, env)
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
    ratios of the reference (the first label) to the others; best-other picks
    among `pool` (default: all the others)."""

    def __init__(self, labels, res, pool=None):
        self.labels, self.ref, self.others = labels, labels[0], labels[1:]
        self.pool = self.others if pool is None else [o for o in self.others if o in pool]
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

    def best(self, s, m):
        """(label, median) of the fastest other component at size s, or
        (None, None)."""
        vals = [(self.value(o, s, m), o) for o in self.pool]
        vals = [(v, o) for v, o in vals if v]
        if not vals:
            return None, None
        v, o = min(vals)
        return o, v

    def ratio_best(self, s, m):
        """reference / the fastest other component (its median), or None."""
        o, den = self.best(s, m)
        num = self.value(self.ref, s, m)
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
                elif stats.pool:
                    r = stats.ratio_best(s, m)
                    row['best_other_%s' % m] = stats.best(s, m)[0] or ''
                    row['ratio_best_%s' % m] = '%.4f' % r if r is not None else ''
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
    best_name = '%s/best-other' % ref if stats.pool else ''
    bw = max(len(best_name), 4 + max([len(o) for o in stats.pool] or [0]) + 3) + 2
    print('%8s' % 'size' + ''.join('%*s' % (w, lab) for lab in labels) +
          ''.join('%*s' % (x, r) for x, r in zip(rw, ratio_names)) +
          ('%*s' % (bw, best_name) if stats.pool else ''))
    for s in stats.sizes:
        line = '%8s' % human_size(s)
        line += ''.join('%*s' % (w, cells.get((lab, s), '-')) for lab in labels)
        for o, x in zip(stats.others, rw):
            r = stats.ratio(o, s, m)
            line += '%*.2f' % (x, r) if r is not None else '%*s' % (x, '-')
        if stats.pool:
            r = stats.ratio_best(s, m)
            line += '%*s' % (bw, '%.2f %s' % (r, stats.best(s, m)[0]) if r is not None else '-')
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
    if stats.pool:
        lines.append(best_other_line(a, coll, stats, desc, iec))
    return lines


def best_other_line(a, coll, stats, desc, iec):
    """'<coll> np=N: adapt2/best-other ...': the geometric mean over sizes of
    the reference's median over the fastest other component's median at that
    size (per metric), over sizes >= RATIO_FROM and over all sizes."""
    common = [s for s in stats.sizes if stats.ratio_best(s, 'avg')]
    big = [s for s in common if s >= RATIO_FROM]

    def gm(m, over):
        rs = [r for r in (stats.ratio_best(s, m) for s in over) if r]
        return '%.2f' % geomean(rs) if rs else 'n/a'
    wins = {}
    for s in common:
        o = stats.best(s, 'avg')[0]
        wins[o] = wins.get(o, 0) + 1
    text = ('%s np=%d: %s/best-other median ratio %s over sizes >= %s, %s over all sizes '
            '(same two ranges: last %s, %s; span %s, %s; best other = the fastest of %s '
            'per size by the metric\'s median; by avg: %s; geometric mean of per-size '
            'ratios over %d repeats%s)')
    return text % (coll, a.np, stats.ref, gm('avg', big), iec, gm('avg', common),
                   gm('last', big), gm('last', common), gm('span', big), gm('span', common),
                   ', '.join(stats.pool),
                   ', '.join('%s %d sizes' % kv for kv in sorted(wins.items())) or '-',
                   a.repeat, '; %s' % desc if desc else '')


def print_tables(a, coll, labels, res, closing, meta=None):
    """Prints one table per metric, appends the ratio lines to closing and
    returns the summary CSV rows."""
    meta = meta or {}
    # best-other: Open MPI's components, not variants of the reference's own
    ref_base = base_of(a, labels[0])
    stats = Stats(labels, res, [o for o in labels[1:] if base_of(a, o) != ref_base])
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



# ---------------------------------------------------------------------------
# Noise mode: compare.py noise ...  (perf/noise_bench, perf/plot_noise.gp)

NOISE_DEFAULT = 'p=0.1,d=5ms'
NOISE_QUICK = {'sizes': '4K', 'noise': ['p=0.3,d=3ms'], 'seeds': '1', 'repeat': 1,
               'iters': 30, 'warmup': 3}
# The keys perf/noise.h knows per mode (keep in sync with noise.c).
NOISE_KEYS = {'random': ('p', 'd', 'dist', 'alpha', 'cap', 'ranks', 'frac', 'how'),
              'periodic': ('d', 'every', 'phase', 'ranks', 'frac', 'how')}
NOISE_CHOICES = {'dist': ('fixed', 'exp', 'pareto'), 'phase': ('rand', 'same'),
                 'how': ('sleep', 'spin')}
# noise_bench's RESULT fields kept in noise_raw.csv (numbers).
NOISE_NUMBERS = ('t_clean_s', 't_noisy_s', 't_clean_max_s', 't_noisy_max_s',
                 'noise_per_rank_s', 'noise_level', 'events_per_rank', 'coll_clean_us',
                 'coll_noisy_us', 'amplification', 'amp_last', 'sync_bound', 'floor',
                 'floor_last')
# What the loops cost besides time (numbers, absent from older benchmarks;
# all but the CPU times only where the component exports adapt2's MPI_T
# counters): process CPU ms per rank; bytes copied per call so calls could
# complete early, the fraction of calls that did, calls refused at the
# detach cap, the progress thread's CPU ms and polls.
NOISE_COST = ('cpu_clean_ms', 'cpu_noisy_ms', 'copied_bytes_per_call_clean',
              'copied_bytes_per_call_noisy', 'detached_frac_clean', 'detached_frac_noisy',
              'detach_refused_clean', 'detach_refused_noisy', 'pt_cpu_clean_ms',
              'pt_cpu_noisy_ms', 'pt_polls_clean', 'pt_polls_noisy')
NOISE_HELP = """\
Noise absorption: runs perf/noise_bench (N iterations of compute + injected
noise + a collective, no barriers; once without and once with noise) for
each component, interleaved (A B, B A, ...: the order rotated) over every
case (np, collective, size, noise setting, seed, repeat), and prints per case
the median [min-max] over seeds x repeats of each component's amplification

  amplification = (mean T_noisy - mean T_clean) / mean noise injected per rank

(1.0: each rank's noise costs only that rank; a lock-step collective
approaches sync_bound, the fully synchronized expectation computed from the
noise actually injected; no algorithm gets below the floor, what the data's
dependencies cost with that noise: a broadcast's root delays every rank, a
reduce's root waits for every rank, an allreduce's ranks for each other, so
a draw that gives the root more noise than the mean rank has a broadcast
floor above 1), the noise level (noise per rank / clean time) and
the ratio of the first component's median amplification to each other one's
(< 1: the first component amplifies less).  Below each case's table: what
the runs cost (medians): each rank's process CPU time per loop (clean /
noisy) and, for adapt2 and its variants (from its MPI_T counters, noisy
loop), the share of calls that completed early (decoupled completion;
a broadcast's leaves and a reduce's root never do), the bytes copied per
call for that, the calls refused at coll_adapt2_detach_max_bytes and the
progress thread's CPU time.  Writes DIR/noise_raw.csv,
DIR/noise_summary.csv, DIR/logs/ and per (collective, size, np) a plot
DIR/noise_<collective>_<size>_np<N>.png of amplification per noise setting.

Noise specs (--noise, repeatable; noise_bench -n; perf/noise.h):
  none | [random:]KEY=VAL,... | periodic:KEY=VAL,...
  random    p=PROB (0.1) per iteration; d=DUR (5ms: fixed value, exp mean,
            pareto minimum); dist=fixed|exp|pareto; alpha=A (1.5, pareto
            shape); cap=DUR (20*d, exp/pareto upper bound)
  periodic  d=DUR (5ms) once every=DUR (50ms) per noisy rank; phase=rand
            (per-rank phase from the seed, default) or same
  both      ranks=all|R|R+R+... or frac=F (noisy ranks chosen by the seed);
            how=sleep|spin (sleep: frees the core, right for oversubscribed
            nodes)
  DUR: a number with us, ms or s.  Events under ~2 ms vanish in the jitter of
  4 ranks on 2 cores; the defaults are visible above it.

Variants (--variant LABEL=COMPONENT:ITEM,..., syntax under options): a
component with extra MCA parameters (KEY=VALUE) and/or benchmark arguments
(-X, e.g. -t: MPI_THREAD_MULTIPLE), compared like one more component.

Examples:
  compare.py noise --component-dir /tmp/b/.libs --components adapt2,tuned \\
      --variant adapt2-nodetach=adapt2:coll_adapt2_detach_max_message=0 \\
      --variant adapt2-pt=adapt2:coll_adapt2_progress_thread=1,-t
  compare.py noise --component-dir /tmp/b/.libs --collective bcast,reduce \\
      --sizes 4K,1M --np 4,8 --noise p=0.1,d=5ms \\
      --noise p=0.1,d=2ms,dist=pareto,alpha=1.5,cap=50ms \\
      --noise periodic:d=5ms,every=50ms --seeds 1,2,3
  compare.py noise --quick --component-dir /tmp/b/.libs
"""


def parse_duration(text):
    """'5ms' -> 5000.0 (us); None if malformed."""
    m = re.fullmatch(r'((?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)(us|ms|s)?', text)
    if not m:
        return None
    return float(m.group(1)) * {None: 1, 'us': 1, 'ms': 1e3, 's': 1e6}[m.group(2)]


def noise_value(mode, k, v):
    """Checks one KEY=VALUE of a noise spec (as noise.c does)."""
    def num(lo, hi, lo_open):
        try:
            x = float(v)
        except ValueError:
            x = None
        if x is None or not math.isfinite(x) or x < lo or (lo_open and x == lo) or x > hi:
            raise UsageError('noise %s=%s: want a number in %s%g, %g]'
                             % (k, v, '(' if lo_open else '[', lo, hi))
        return x
    if k in NOISE_CHOICES:
        if v not in NOISE_CHOICES[k]:
            raise UsageError('noise %s=%s: want %s' % (k, v, ' or '.join(NOISE_CHOICES[k])))
    elif k in ('d', 'cap', 'every'):
        us = parse_duration(v)
        if not us:
            raise UsageError('noise %s=%s: want a positive duration (us, ms, s)' % (k, v))
        return us
    elif k == 'p':
        return num(0, 1, False)
    elif k == 'alpha':
        return num(0, float('inf'), True)
    elif k == 'frac':
        return num(0, 1, True)
    elif k == 'ranks':
        if v != 'all' and not re.fullmatch(r'\d+(\+\d+){0,63}', v):
            raise UsageError('noise ranks=%s: want all, R or R+R+...' % v)
    return v


def parse_noise(text, nps):
    """Checks a noise spec for every np of the run; returns it stripped."""
    text = text.strip()
    if text in ('none', 'off'):
        return text
    mode, body = 'random', text
    colon, eq = text.find(':'), text.find('=')
    if colon >= 0 and (eq < 0 or colon < eq):
        mode, body = text[:colon], text[colon + 1:]
        if mode not in NOISE_KEYS:
            raise UsageError('noise %r: unknown mode %r (random or periodic)' % (text, mode))
    vals = {}
    for item in filter(None, body.split(',')):
        k, sep, v = item.partition('=')
        if not sep or not k:
            raise UsageError('noise %r: %r is not KEY=VALUE' % (text, item))
        if k not in NOISE_KEYS[mode]:
            raise UsageError('noise %r: unknown key %r for %s noise (known: %s)'
                             % (text, k, mode, ', '.join(NOISE_KEYS[mode])))
        if k in ('ranks', 'frac') and ('ranks' in vals or 'frac' in vals):
            raise UsageError('noise %r: ranks= and frac= given twice or together' % text)
        vals[k] = noise_value(mode, k, v)
    d = vals.get('d', 5000.0)
    if mode == 'random' and vals.get('cap', 20 * d) < d:
        raise UsageError('noise %r: cap below d' % text)
    if vals.get('ranks', 'all') != 'all':
        bad = [int(r) for r in vals['ranks'].split('+') if int(r) >= min(nps)]
        if bad:
            raise UsageError('noise %r: rank %d is not a rank at np=%d' % (text, bad[0], min(nps)))
    return text


def build_noise_parser():
    p = argparse.ArgumentParser(
        prog='compare.py noise', formatter_class=argparse.RawDescriptionHelpFormatter,
        description=NOISE_HELP)
    p.add_argument('--components', default='adapt2,tuned,adapt',
                   help='comma list from %s (default: adapt2,tuned,adapt; the first one is '
                        'the reference of the ratios; tuned/libnbc: Open MPI\'s default; '
                        'components without code for a collective are skipped for it)'
                   % ','.join(COMPONENTS))
    p.add_argument('--variant', action='append', metavar='LABEL=COMPONENT:ITEM,...',
                   help=VARIANT_HELP)
    p.add_argument('--collective', default='bcast',
                   help='comma list from %s (default: bcast; reductions are MPI_SUM on '
                        'float)' % ','.join(NOISE_COLLECTIVES))
    p.add_argument('--sizes', default=None,
                   help='comma list of message sizes, K/M suffixes (default 1M; --quick: %s)'
                        % NOISE_QUICK['sizes'])
    p.add_argument('--np', default='4', help='comma list of rank counts (default 4)')
    p.add_argument('--noise', action='append', default=None, metavar='SPEC',
                   help='a noise setting (repeatable; default %s, the reference loop; '
                        '--quick: %s); syntax above' % (NOISE_DEFAULT, NOISE_QUICK['noise'][0]))
    p.add_argument('--seeds', default=None,
                   help='comma list of noise seeds (default 1,2,3; --quick: 1)')
    p.add_argument('--repeat', type=int, default=None,
                   help='runs per seed and component (default 1)')
    p.add_argument('--iters', type=int, default=None,
                   help='iterations per loop (default 200; --quick: %d)' % NOISE_QUICK['iters'])
    p.add_argument('--warmup', type=int, default=None,
                   help='untimed warm-up iterations (default 10; --quick: %d)'
                        % NOISE_QUICK['warmup'])
    p.add_argument('--compute', type=float, default=2000,
                   help='compute per iteration in us (default 2000)')
    p.add_argument('--spin-compute', action='store_true',
                   help='busy compute instead of sleeping (dedicated cores only)')
    p.add_argument('--poll', type=float, default=0, metavar='US',
                   help='non-blocking collectives: MPI_Test every US us during the compute '
                        '(default 0: never)')
    p.add_argument('--validate', action='store_true',
                   help='check the data after each loop (noise_bench -c)')
    add_run_options(p, 'noise_bench', 300, 'noise-')
    p.add_argument('--quick', action='store_true',
                   help='one small size, one seed, few iterations (a smoke test of a few '
                        'seconds per component); explicit options still win')
    return p


def int_list(text, what, lo):
    try:
        xs = [int(x) for x in text.split(',') if x.strip()]
    except ValueError:
        raise UsageError('bad %s %r (comma list of integers)' % (what, text))
    if not xs or min(xs) < lo:
        raise UsageError('bad %s %r (integers >= %d)' % (what, text, lo))
    return xs


def noise_defaults(a):
    q = NOISE_QUICK if a.quick else {}
    a.sizes = a.sizes or q.get('sizes', '1M')
    a.noise = a.noise or q.get('noise', [NOISE_DEFAULT])
    a.seeds = a.seeds or q.get('seeds', '1,2,3')
    a.repeat = a.repeat if a.repeat is not None else q.get('repeat', 1)
    a.iters = a.iters if a.iters is not None else q.get('iters', 200)
    a.warmup = a.warmup if a.warmup is not None else q.get('warmup', 10)


def noise_check(a):
    a.size_list = [parse_size(x) for x in a.sizes.split(',') if x.strip()]
    if not a.size_list or min(a.size_list) < 1 or max(a.size_list) > 2**31 - 1:
        raise UsageError('--sizes: want sizes from 1 byte to 2 GiB - 1')
    a.nps = int_list(a.np, '--np', 1)
    a.np = a.nps[0]                 # the pre-flight check's
    a.seed_list = int_list(a.seeds, '--seeds', 0)
    a.noise = [parse_noise(n, a.nps) for n in a.noise]
    for name, v, lo in (('--repeat', a.repeat, 1), ('--iters', a.iters, 1),
                        ('--warmup', a.warmup, 0)):
        if v < lo:
            raise UsageError('%s must be at least %d' % (name, lo))
    for name, v in (('--compute', a.compute), ('--poll', a.poll)):
        if not (0 <= v <= 1e9):
            raise UsageError('%s must be between 0 and 1e9 us' % name)
    if a.timeout <= 0:
        raise UsageError('--timeout must be positive')


def noise_parse_args(argv):
    p = build_noise_parser()
    a = p.parse_args(argv)
    try:
        resolve_components(a)
        a.collectives = comma_list(a.collective, NOISE_COLLECTIVES, 'collective')
        noise_defaults(a)
        noise_check(a)
        check_paths(a, 'noise_bench')
        a.plan, a.notes = build_plan(a)
    except UsageError as e:
        p.print_usage(sys.stderr)
        print('compare.py noise: error: %s' % e, file=sys.stderr)
        sys.exit(2)
    return a


def noise_bench_args(a, case, seed):
    np_, coll, size, ni = case
    args = ['-k', coll, '-m', str(size), '-n', a.noise[ni], '-s', str(seed),
            '-i', str(a.iters), '-x', str(a.warmup), '-w', '%g' % a.compute, '-q']
    if a.validate:
        args.append('-c')
    if a.spin_compute:
        args.append('-b')
    if a.poll > 0 and coll in NONBLOCKING:
        args += ['-P', '%g' % a.poll]
    return args


def parse_result(out):
    """The key=value pairs of noise_bench's 'RESULT ' line (numbers as
    floats); ValueError if there is none."""
    for line in out.splitlines():
        if line.startswith('RESULT '):
            kv = dict(x.split('=', 1) for x in line.split()[1:] if '=' in x)
            for k in NOISE_NUMBERS:
                kv[k] = float(kv[k])
            for k in NOISE_COST:
                kv[k] = float(kv[k]) if k in kv else None
            return kv
    raise ValueError('no RESULT line')


def noise_cases(a):
    """[(np, collective, size, noise index)] in run order."""
    return [(n, c, s, i) for n in a.nps for c in a.collectives for s in a.size_list
            for i in range(len(a.noise))]


def noise_run_one(a, env, n, total, case, seed, rep, comp, lab):
    """One mpirun; (row, None) or (None, why it failed)."""
    np_, coll, size, ni = case
    cmd = mpirun_cmd(a, comp, np_, noise_bench_args(a, case, seed), env.libdir)
    what = '%s %s %s np=%d noise %s seed %d repeat %d' % (lab, coll, human_size(size), np_,
                                                          a.noise[ni], seed, rep + 1)
    print('[%d/%d] %s ...' % (n, total, what), end='', file=sys.stderr, flush=True)
    rc, out, err, secs = run(cmd, a.timeout)
    log = os.path.join(env.logdir, '%03d_%s_%s_np%d_n%d_s%d_%s_r%d.txt' % (
        n, coll, human_size(size), np_, ni + 1, seed, lab, rep + 1))
    with open(log, 'w') as f:
        f.write('# command: %s\n# rc: %s, %.1f s\n%s\n# stderr:\n%s'
                % (shlex.join(cmd), rc, secs, out, err))
    try:
        if rc != 0:
            raise ValueError('timed out after %.0f s' % a.timeout if rc is None
                             else 'exit status %d' % rc)
        res = parse_result(out)
    except (ValueError, KeyError) as e:
        print(' FAILED', file=sys.stderr)
        tail = '\n'.join((err.strip() or out.strip()).splitlines()[-15:])
        return None, '%s: %s\n  command: %s\n  log: %s\n%s' % (what, e, shlex.join(cmd),
                                                               log, tail)
    print(' %.1f s, amplification %.2f' % (secs, res['amplification']), file=sys.stderr,
          flush=True)
    row = dict(run=n, repeat=rep + 1, seed=seed, np=np_, collective=coll, size=size,
               noise=a.noise[ni], noise_canon=res.get('noise', ''), component=lab,
               validate=res.get('validate', ''), thread=res.get('thread', ''),
               wall_s='%.2f' % secs)
    row.update({k: res[k] for k in NOISE_NUMBERS + NOISE_COST})
    return row, None


def noise_run_matrix(a, env):
    """All runs, interleaved (components innermost); fills env.noise[case][label]
    with one row per (seed, repeat) and writes noise_raw.csv.  None, or why
    it failed."""
    fields = ['run', 'repeat', 'seed', 'np', 'collective', 'size', 'noise', 'noise_canon',
              'component'] + list(NOISE_NUMBERS) + ['validate', 'wall_s', 'thread'] + \
        list(NOISE_COST)
    cases = noise_cases(a)
    labels = {coll: [(comp, lab) for c, comp, lab in a.plan if c == coll]
              for coll in a.collectives}
    total = a.repeat * len(a.seed_list) * sum(len(labels[c[1]]) for c in cases)
    n = 0
    with open(env.raw_path, 'w', newline='') as fraw:
        wr = csv.DictWriter(fraw, fieldnames=fields, extrasaction='ignore')
        wr.writeheader()
        for rep in range(a.repeat):
            for seed_i, seed in enumerate(a.seed_list):
                for case in cases:
                    for comp, lab in rotated(labels[case[1]], rep + seed_i):
                        n += 1
                        row, failed = noise_run_one(a, env, n, total, case, seed, rep,
                                                    comp, lab)
                        if failed:
                            return failed
                        wr.writerow(row)
                        fraw.flush()
                        env.noise.setdefault(case, {}).setdefault(lab, []).append(row)
    return None


def cell3(t, fmt='%.2f'):
    return '-' if t is None else (fmt + ' [' + fmt + '-' + fmt + ']') % t


def noise_case_stats(runs):
    """{field: (median, min, max)} over the runs of one component in one case
    (NOISE_COST fields: None where a run lacks them)."""
    st = {k: spread([r[k] for r in runs]) for k in NOISE_NUMBERS}
    for k in NOISE_COST:
        vals = [r.get(k) for r in runs]
        st[k] = spread(vals) if vals and None not in vals else None
    return st


def print_noise_table(a, np_, coll, size, labels, env):
    """One table per (np, collective, size): a line per noise setting; returns
    the summary CSV rows."""
    ref, others = labels[0], labels[1:]
    nsamp = a.repeat * len(a.seed_list)
    print()
    print('== %s %s np=%d: noise amplification, median [min-max] over %d runs (seeds %s x %d '
          'repeat%s); 1.0: each rank\'s noise costs only itself; sync: fully synchronized '
          'expectation; floor: the least that the data\'s dependencies allow these draws '
          '(median); level: noise per rank / clean time; ratio %s/other < 1: %s '
          'amplifies less' % (coll, human_size(size), np_, nsamp,
                              ','.join(map(str, a.seed_list)), a.repeat,
                              '' if a.repeat == 1 else 's', ref, ref))
    rows, lines, costs = [], [], []
    for ni, spec in enumerate(a.noise):
        res = env.noise.get((np_, coll, size, ni), {})
        st = {lab: noise_case_stats(res[lab]) for lab in labels if res.get(lab)}
        every = [r for lab in labels for r in res.get(lab, [])]
        sync = statistics.median([r['sync_bound'] for r in every]) if every else None
        floor = statistics.median([r['floor'] for r in every]) if every else None
        level = statistics.median([r['noise_level'] for r in every]) if every else None
        cells = [cell3(st[lab]['amplification']) if lab in st else '-' for lab in labels]
        ratios = [st[ref]['amplification'][0] / st[o]['amplification'][0]
                  if ref in st and o in st and st[o]['amplification'][0] > 0 else None
                  for o in others]
        lines.append((spec, level, sync, floor, cells, ratios))
        costs.append((spec, st))
        for lab in labels:
            if lab not in st:
                continue
            row = dict(np=np_, collective=coll, size=size, noise=spec, component=lab,
                       runs=len(res[lab]), reference=ref, case_sync_bound='%.4f' % sync,
                       case_floor='%.4f' % floor,
                       case_noise_level='%.4f' % level)
            for k in NOISE_NUMBERS + NOISE_COST:
                for name, v in zip(('median', 'min', 'max'), st[lab][k] or ('', '', '')):
                    row['%s_%s' % (k, name)] = '%.6g' % v if v != '' else ''
            if lab != ref:
                r = ratios[others.index(lab)]
                row['ratio_amplification'] = '%.4f' % r if r is not None else ''
            rows.append(row)
    print_noise_lines(labels, lines)
    print_cost_lines(a, labels, costs)
    return rows


def print_noise_lines(labels, lines):
    ref, others = labels[0], labels[1:]
    sw = max([len(l[0]) for l in lines] + [5]) + 2
    w = max([len(c) for l in lines for c in l[4]] + [len(x) for x in labels]) + 2
    rnames = ['%s/%s' % (ref, o) for o in others]
    print('%-*s%8s%7s%7s' % (sw, 'noise', 'level', 'sync', 'floor')
          + ''.join('%*s' % (w, x) for x in labels)
          + ''.join('%*s' % (len(r) + 2, r) for r in rnames))
    for spec, level, sync, floor, cells, ratios in lines:
        print('%-*s%7.1f%%%7s%7s' % (sw, spec, 100 * level if level is not None else float('nan'),
                                     '%.2f' % sync if sync is not None else '-',
                                     '%.2f' % floor if floor is not None else '-')
              + ''.join('%*s' % (w, c) for c in cells)
              + ''.join('%*s' % (len(n) + 2, '%.2f' % r if r is not None else '-')
                        for n, r in zip(rnames, ratios)))


def fmt_bytes(n):
    if n >= 1 << 20:
        return '%.1f MiB' % (n / (1 << 20))
    if n >= 1024:
        return '%.1f KiB' % (n / 1024)
    return '%.0f B' % n


def cost_cells(a, lab, st):
    """The cost columns of one component in one case (medians): CPU clean /
    noisy; for adapt2 and its variants the noisy loop's detached share, bytes
    copied per call, refusals, progress thread CPU."""
    def med(k):
        return st[k][0] if st.get(k) else None
    c, n = med('cpu_clean_ms'), med('cpu_noisy_ms')
    cells = ['%.1f / %.1f' % (c, n) if c is not None and n is not None else '-']
    if base_of(a, lab) == 'adapt2' and med('detached_frac_noisy') is not None:
        cells += ['%.1f%%' % (100 * med('detached_frac_noisy')),
                  fmt_bytes(med('copied_bytes_per_call_noisy')),
                  '%.0f' % med('detach_refused_noisy'), '%.2f' % med('pt_cpu_noisy_ms')]
    else:
        cells += ['-'] * 4
    return cells


def print_cost_lines(a, labels, costs):
    """Below a case's table: per noise setting and component what the runs
    cost (nothing if no run reported it, e.g. an older benchmark)."""
    if not any(st[lab].get('cpu_noisy_ms') for _, st in costs for lab in st):
        return
    print('   cost, median over runs: cpu_ms: process CPU time per rank and loop, clean / '
          'noisy; adapt2 (MPI_T counters, noisy loop): detached: calls that completed '
          'before their data had left / all calls; copied: bytes copied per call (mean over '
          'ranks); refused: calls that found coll_adapt2_detach_max_bytes reached (all '
          'ranks); pt_cpu_ms: progress thread CPU per rank')
    heads = ['cpu_ms', 'detached', 'copied', 'refused', 'pt_cpu_ms']
    table = [(spec if i == 0 else '', lab, cost_cells(a, lab, st[lab]))
             for spec, st in costs for i, lab in enumerate([x for x in labels if x in st])]
    sw = max([len(t[0]) for t in table] + [5]) + 2
    lw = max([len(t[1]) for t in table] + [9]) + 2
    ws = [max([len(t[2][j]) for t in table] + [len(h)]) + 2 for j, h in enumerate(heads)]
    print('%-*s%-*s' % (sw, 'noise', lw, 'component') +
          ''.join('%*s' % (w, h) for w, h in zip(ws, heads)))
    for spec, lab, cells in table:
        print('%-*s%-*s' % (sw, spec, lw, lab) + ''.join('%*s' % (w, c) for w, c in zip(ws, cells)))


def noise_closing(a, env):
    """Per (np, collective): geometric means over sizes and noise settings of
    each component's median amplification, of sync_bound, and of the ratios."""
    lines = []
    for np_ in a.nps:
        for coll in a.collectives:
            labels = [lab for c, _, lab in a.plan if c == coll]
            med = {lab: [] for lab in labels}
            syncs, ratios = [], {o: [] for o in labels[1:]}
            for case in noise_cases(a):
                if case[:2] != (np_, coll) or case not in env.noise:
                    continue
                res = env.noise[case]
                m = {lab: statistics.median([r['amplification'] for r in res[lab]])
                     for lab in labels if res.get(lab)}
                for lab, v in m.items():
                    med[lab].append(v)
                syncs.append(statistics.median([r['sync_bound'] for lab in res
                                                for r in res[lab]]))
                for o in ratios:
                    if labels[0] in m and m.get(o):
                        ratios[o].append(m[labels[0]] / m[o])
            n = len(syncs)
            if not n:
                continue
            # Amplification is a difference over noise and can be zero or
            # negative on a busy machine: average it arithmetically; the
            # ratios of positive amplifications get geometric means.
            lines.append('noise %s np=%d: amplification %s, sync_bound %.2f; %s (means over '
                         '%d case%s, geometric for ratios: sizes %s x noise settings %d; '
                         'medians over %d runs each)' % (
                             coll, np_, ', '.join('%s %.2f' % (lab, statistics.mean(med[lab]))
                                                  for lab in labels if med[lab]),
                             geomean(syncs),
                             ', '.join('%s/%s %.2f' % (labels[0], o, geomean(r))
                                       for o, r in ratios.items() if r) or 'no ratios',
                             n, '' if n == 1 else 's',
                             ','.join(human_size(x) for x in a.size_list), len(a.noise),
                             a.repeat * len(a.seed_list)))
            cost = cost_closing(a, env, np_, coll, labels)
            if cost:
                lines.append(cost)
    return lines


def cost_closing(a, env, np_, coll, labels):
    """'noise <coll> np=N cost: ...': per component the median over cases of
    its per-case medians of the noisy loop's CPU time and (adapt2 and its
    variants) decoupling figures; None if no run reported them."""
    per = {lab: {k: [] for k in NOISE_COST} for lab in labels}
    ncases = 0
    for case in noise_cases(a):
        if case[:2] != (np_, coll) or case not in env.noise:
            continue
        ncases += 1
        for lab, runs in env.noise[case].items():
            for k in NOISE_COST:
                vals = [r.get(k) for r in runs]
                if vals and None not in vals:
                    per[lab][k].append(statistics.median(vals))

    def med(lab, k):
        return statistics.median(per[lab][k]) if per[lab][k] else None
    cpu = ['%s %.1f' % (lab, med(lab, 'cpu_noisy_ms')) for lab in labels
           if med(lab, 'cpu_noisy_ms') is not None]
    if not cpu:
        return None
    dec = ['%s detached %.1f%%, %s copied per call, %.0f refused, progress thread %.2f ms'
           % (lab, 100 * med(lab, 'detached_frac_noisy'),
              fmt_bytes(med(lab, 'copied_bytes_per_call_noisy')),
              med(lab, 'detach_refused_noisy'), med(lab, 'pt_cpu_noisy_ms'))
           for lab in labels
           if base_of(a, lab) == 'adapt2' and med(lab, 'detached_frac_noisy') is not None]
    return ('noise %s np=%d cost: CPU ms per rank in the noisy loop %s%s (medians over %d '
            'case%s of the medians over runs)' % (
                coll, np_, ', '.join(cpu), '; ' + '; '.join(dec) if dec else '', ncases,
                '' if ncases == 1 else 's'))


def write_noise_summary(env, rows):
    fields = ['np', 'collective', 'size', 'noise', 'component', 'runs', 'reference',
              'case_noise_level', 'case_sync_bound', 'case_floor', 'ratio_amplification']
    fields += ['%s_%s' % (k, n) for k in NOISE_NUMBERS + NOISE_COST
               for n in ('median', 'min', 'max')]
    with open(env.sum_path, 'w', newline='') as f:
        wr = csv.DictWriter(f, fieldnames=fields)
        wr.writeheader()
        wr.writerows(rows)


def plot_noise(a, env, np_, coll, size, labels):
    """noise_<coll>_<size>_np<N>.png: median amplification (bars min-max) per
    noise setting, a line per component, and the sync_bound; None if no plot."""
    gp = os.path.join(HERE, 'plot_noise.gp')
    if not shutil.which('gnuplot'):
        print('compare.py: gnuplot not found (Debian package gnuplot-nox): no plot',
              file=sys.stderr)
        return None
    if not os.path.exists(gp):
        print('compare.py: %s missing: no plot' % gp, file=sys.stderr)
        return None
    base = os.path.join(env.out_dir, 'noise_%s_%s_np%d' % (coll, human_size(size), np_))
    nblocks = write_noise_dat(a, env, base + '.dat', np_, coll, size, labels)
    title = '%s %s, np=%d, %d iterations of %g us compute, %d runs per point (%s)' % (
        coll, human_size(size), np_, a.iters, a.compute, a.repeat * len(a.seed_list),
        ', '.join(labels))
    cmd = ['gnuplot', '-c', gp, base + '.dat', base + '.png', title, str(nblocks),
           str(len(a.noise))]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print('compare.py: gnuplot failed (%s): %s' % (shlex.join(cmd), r.stderr.strip()),
              file=sys.stderr)
        return None
    return base + '.png'


def wrap_spec(spec, width=24):
    """A noise spec as a plot label: lines of about `width` characters, cut
    after commas ('\\n' is gnuplot's line break in a quoted string)."""
    lines = ['']
    for item in spec.replace('"', "'").split(','):
        if lines[-1] and len(lines[-1]) + len(item) + 1 > width:
            lines[-1] += ','
            lines.append(item)
        else:
            lines[-1] += (',' if lines[-1] else '') + item
    return '\\n'.join(lines)


def write_noise_dat(a, env, path, np_, coll, size, labels):
    """Blocks (two blank lines apart): one per component, then sync_bound;
    lines 'index median min max "noise setting (level)"'."""
    with open(path, 'w') as f:
        for lab in labels + ['sync_bound']:
            f.write('"%s"\n' % ('fully synchronized (sync_bound)' if lab == 'sync_bound'
                                else lab))
            for ni, spec in enumerate(a.noise):
                res = env.noise.get((np_, coll, size, ni), {})
                runs = [r for x in res for r in res[x]] if lab == 'sync_bound' \
                    else res.get(lab, [])
                if not runs:
                    continue
                key = 'sync_bound' if lab == 'sync_bound' else 'amplification'
                level = statistics.median([r['noise_level'] for x in res for r in res[x]])
                f.write('%d %.4f %.4f %.4f "%s\\n(%.0f%%)"\n' % ((ni,) + spread(
                    [r[key] for r in runs]) + (wrap_spec(spec), 100 * level)))
            f.write('\n\n')
    return len(labels) + 1


def noise_setup(a):
    out_dir = a.out or os.path.join(HERE, 'results', 'noise-' +
                                    datetime.datetime.now().strftime('%Y%m%d-%H%M%S'))
    env = types.SimpleNamespace(t_start=time.time(), libdir=pkglibdir(), out_dir=out_dir,
                                logdir=os.path.join(out_dir, 'logs'),
                                raw_path=os.path.join(out_dir, 'noise_raw.csv'),
                                sum_path=os.path.join(out_dir, 'noise_summary.csv'),
                                noise={})
    os.makedirs(env.logdir, exist_ok=True)
    return env


def noise_summarize(a, env):
    rows, pngs = [], []
    for np_ in a.nps:
        for coll in a.collectives:
            labels = [lab for c, _, lab in a.plan if c == coll]
            for size in a.size_list:
                rows += print_noise_table(a, np_, coll, size, labels, env)
                if not a.no_plot:
                    png = plot_noise(a, env, np_, coll, size, labels)
                    if png:
                        pngs.append(png)
    return rows, pngs


def noise_main(argv):
    a = noise_parse_args(argv)
    env = noise_setup(a)
    print('# compare.py noise: bench=%s np=%s collectives=%s sizes=%s components=%s noise=%s '
          'seeds=%s repeat=%d iters=%d compute_us=%g%s%s' % (
              a.bench, ','.join(map(str, a.nps)), ','.join(a.collectives),
              ','.join(human_size(x) for x in a.size_list), ','.join(a.components),
              ' | '.join(a.noise), ','.join(map(str, a.seed_list)), a.repeat, a.iters,
              a.compute, ' component-dir=%s' % a.component_dir if a.component_dir else '',
              variants_text(a)),
          file=sys.stderr)
    notes = list(a.notes)
    if not a.no_check:
        notes += adapt2_coverage(a, a.plan, env)
        preflight(a, a.plan, env)
    print_notes(notes)
    failed = noise_run_matrix(a, env)
    if failed:
        print('compare.py noise: run failed: %s' % failed, file=sys.stderr)
        print('raw CSV so far: %s' % env.raw_path, file=sys.stderr)
        return 1
    rows, pngs = noise_summarize(a, env)
    write_noise_summary(env, rows)
    print_footer(env, noise_closing(a, env), notes, pngs)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
