#!/usr/bin/env python3
"""Run the kc DSL corpus (tests/dsl/corpus) through kc and clang.

usage: run_corpus.py [--kc PATH] [--clang PATH] [--no-clang] [--all-variants N]
                     [--timeout S] [FILE...]

ok/*.kc   must pass `clang -fsyntax-only -x c -I dsl/include`, `kc check`,
          `kc variants` (and every `// expect-variants: KERNEL N`) and
          `kc emit`; with --all-variants N, `kc emit --variant V` also runs
          for up to N variants of each kernel.
bad/*.kc  every `// expect-error: A|B` line (in the file or in a local header
          it includes) must get an error on that line
          whose message contains A or B (case-insensitive) from `kc check`;
          `// expect-error(G): A` lines with the same label G are satisfied
          by one matching error on any of them; `// expect-compile-error: A`
          may be reported by `kc check` or by `kc emit` (default variant).
          Errors on lines without an annotation are reported as extra.
Any exit by signal, exit status other than 0/1, timeout, or sanitizer
report is a crash.  Exit status: 0 when everything matched, 1 otherwise.
"""
import argparse, os, re, subprocess, sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..', '..'))
DIAG = re.compile(r'^(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+): (?P<sev>error|warning|note): (?P<msg>.*)$')
ANN = re.compile(r'//\s*expect-(?P<kind>error|compile-error)(?:\((?P<group>[^)]*)\))?:\s*(?P<pat>.*?)\s*$')
VAR = re.compile(r'//\s*expect-variants:\s*(\S+)\s+(\d+)')
SAN = re.compile(r'(AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:)')

def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        return p.returncode, p.stdout.decode('utf-8', 'replace'), p.stderr.decode('utf-8', 'replace')
    except subprocess.TimeoutExpired as e:
        return 'timeout', (e.stdout or b'').decode('utf-8', 'replace'), (e.stderr or b'').decode('utf-8', 'replace')

def crashed(rc, err):
    if rc == 'timeout':
        return 'TIMEOUT'
    if rc not in (0, 1):
        return 'exit status %s%s' % (rc, ' (signal %d)' % -rc if isinstance(rc, int) and rc < 0 else '')
    if SAN.search(err):
        return 'sanitizer report'
    return None

INC = re.compile(r'^\s*#\s*include\s*"([^"]+)"')

def sources(path, seen=None):
    """The file and the local headers it includes (recursively), which exist."""
    seen = seen if seen is not None else []
    path = os.path.normpath(path)
    if path in seen or not os.path.isfile(path):
        return seen
    seen.append(path)
    for l in open(path, encoding='utf-8', errors='replace'):
        m = INC.match(l)
        if m:
            sources(os.path.join(os.path.dirname(path), m.group(1)), seen)
    return seen

def diags(path, text, files):
    """Errors as (file, line, message) for the files in `files` (matched by
    path relative to the including file or by absolute path)."""
    out = []
    for l in text.splitlines():
        m = DIAG.match(l)
        if not m or m.group('sev') != 'error':
            continue
        f = m.group('file')
        cand = [os.path.normpath(f), os.path.normpath(os.path.join(os.path.dirname(path), f))]
        hit = [x for x in files if x in cand or os.path.abspath(x) in map(os.path.abspath, cand)]
        if not hit and os.path.basename(f) == os.path.basename(path):
            hit = [files[0]]
        if hit:
            out.append((hit[0], int(m.group('line')), m.group('msg')))
    return out

class R:
    def __init__(self): self.fails = []
    def fail(self, f, what): self.fails.append((f, what)); print('FAIL %s: %s' % (os.path.relpath(f, HERE), what))

def check_ok(f, a, r):
    if a.clang:
        rc, o, e = run([a.clang, '-fsyntax-only', '-x', 'c', '-I', os.path.join(ROOT, 'dsl', 'include'), f], a.timeout)
        if rc != 0: r.fail(f, 'clang rejects it:\n' + e)
    rc, o, e = run([a.kc, 'check', f], a.timeout)
    c = crashed(rc, e)
    if c: r.fail(f, 'kc check: %s\n%s' % (c, e[-3000:])); return
    if rc != 0: r.fail(f, 'kc check rejects it:\n' + e)
    rc, o, e = run([a.kc, 'variants', f], a.timeout)
    c = crashed(rc, e)
    if c: r.fail(f, 'kc variants: %s\n%s' % (c, e[-3000:])); return
    if rc != 0: r.fail(f, 'kc variants fails:\n' + e); return
    per = defaultdict(list)
    for l in o.splitlines():
        p = l.split()
        if len(p) >= 1: per[p[0]].append(p[1] if len(p) > 1 else '')
    src = open(f, encoding='utf-8', errors='replace').read()
    for k, n in VAR.findall(src):
        if len(per.get(k, [])) != int(n):
            r.fail(f, 'kc variants: kernel %s has %d variants, expected %s' % (k, len(per.get(k, [])), n))
    rc, o, e = run([a.kc, 'emit', f], a.timeout)
    c = crashed(rc, e)
    if c: r.fail(f, 'kc emit: %s\n%s' % (c, e[-3000:])); return
    if rc != 0: r.fail(f, 'kc emit fails:\n' + e)
    if a.all_variants:
        for k, vs in per.items():
            for v in vs[:a.all_variants]:
                if not v or v == '-': continue   # '-' is how kc variants spells no tunables
                rc, o, e = run([a.kc, 'emit', f, '--kernel', k, '--variant', v], a.timeout)
                c = crashed(rc, e)
                if c: r.fail(f, 'kc emit --kernel %s --variant %s: %s\n%s' % (k, v, c, e[-3000:])); break
                if rc != 0: r.fail(f, 'kc emit --kernel %s --variant %s fails:\n%s' % (k, v, e)); break

def check_bad(f, a, r):
    files = sources(f)
    exp = []   # (file, line, kind, group, [alternatives])
    for src in files:
        for i, l in enumerate(open(src, encoding='utf-8', errors='replace'), 1):
            m = ANN.search(l)
            if m:
                exp.append((src, i, m.group('kind'), m.group('group'),
                            [s.strip().lower() for s in m.group('pat').split('|')]))
    if not exp: r.fail(f, 'no expect-error annotation'); return
    compile_only = any(k == 'compile-error' for _, _, k, _, _ in exp)
    rc, o, e = run([a.kc, 'check', f], a.timeout)
    c = crashed(rc, e)
    if c: r.fail(f, 'kc check: %s\n%s' % (c, e[-3000:])); return
    got = diags(f, e + o, files)
    if compile_only:
        rc2, o2, e2 = run([a.kc, 'emit', f], a.timeout)
        c = crashed(rc2, e2)
        if c: r.fail(f, 'kc emit: %s\n%s' % (c, e2[-3000:])); return
        got += [d for d in diags(f, e2 + o2, files) if d not in got]
    if rc == 0 and not compile_only:
        r.fail(f, 'kc check accepts it (exit 0)')
    groups = defaultdict(list)
    for src, ln, k, g, alts in exp:
        groups[(src, g) if g else ('line', src, ln, tuple(alts))].append((src, ln, alts))
    used = set()
    rel = lambda src: os.path.relpath(src, os.path.dirname(f))
    for key, items in groups.items():
        where = {(src, ln) for src, ln, _ in items}
        alts = items[0][2]
        hit = [d for d in got if (d[0], d[1]) in where and any(s in d[2].lower() for s in alts)]
        if not hit:
            near = [d for d in got if (d[0], d[1]) in where]
            r.fail(f, '%s: expected an error containing %s; got %s' % (
                ', '.join('%s:%d' % (rel(s_), l_) for s_, l_ in sorted(where)),
                ' | '.join(repr(s) for s in alts),
                ('; '.join('%d: %s' % (d[1], d[2]) for d in near) if near else 'nothing on that line')))
        used |= where
    extra = [d for d in got if (d[0], d[1]) not in used]
    if extra:
        r.fail(f, 'unexpected errors: ' + '; '.join('%s:%d: %s' % (rel(d[0]), d[1], d[2]) for d in extra))

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--kc', default=os.path.join(ROOT, 'build', 'tools', 'kc'))
    ap.add_argument('--clang', default='clang-19')
    ap.add_argument('--no-clang', dest='clang', action='store_const', const=None)
    ap.add_argument('--all-variants', type=int, default=0)
    ap.add_argument('--timeout', type=float, default=10)
    ap.add_argument('files', nargs='*')
    a = ap.parse_args()
    files = a.files or sorted(
        [os.path.join(HERE, 'ok', x) for x in os.listdir(os.path.join(HERE, 'ok')) if x.endswith('.kc')] +
        [os.path.join(HERE, 'bad', x) for x in os.listdir(os.path.join(HERE, 'bad')) if x.endswith('.kc')])
    r = R()
    for f in files:
        f = os.path.abspath(f)
        (check_bad if os.sep + 'bad' + os.sep in f else check_ok)(f, a, r)
    bad_files = {f for f, _ in r.fails}
    print('%d files, %d failing, %d failures' % (len(files), len(bad_files), len(r.fails)))
    return 1 if r.fails else 0

if __name__ == '__main__':
    sys.exit(main())
