"""Submissions of one lab that are unusually alike: a list to look at, not a verdict.

For each lab, every student's file is taken from their submission (a
folder, or an archive read in memory: nothing is unpacked, no link is
followed), and the skeleton's own lines are discounted: a line of the
student's file that is, but for spacing, a line of the kit's skeleton is
left out. What remains is what the student wrote. Debian's similarity-tester
(sim_c: it compares token runs, so renamed variables, moved comments and
reformatting do not hide a copy) then says, for each pair, which share of
one file's code is found in the other's.

A pair is listed when each of the two holds at least THRESHOLD % of the
other, and they are more alike to each other than either is to the kit's
reference (a student file that is the reference is listed apart, as close
to the reference: two such files are alike because of the reference, not
because of each other).
"""

import os
import re
import shutil
import stat
import subprocess
import tarfile
import tempfile
import zipfile

ARCHIVES = (".tar.gz", ".tar.xz", ".tgz", ".tar", ".zip")
MAX_FILE = 262144            # a lab file of more is not read (the grader refuses it too)
MAX_ARCHIVE = 256 << 20      # an archive of more is not opened
MAX_MEMBERS = 20000
INSTALL_SIM = ("similarity-tester is not installed: the similarity list needs its sim_c "
               "(Debian, Ubuntu: sudo apt-get install similarity-tester)")


def sim_path():
    return shutil.which(os.environ.get("KIT_SIM_C", "sim_c"))


def safe_name(entry):
    """The name the class grader gives a submission (grade-class.sh's safe_name)."""
    n = os.path.basename(entry)
    for suffix in (".tar.gz", ".tar.xz", ".tgz", ".tar", ".zip"):
        if n.endswith(suffix):
            n = n[: -len(suffix)]
            break
    n = re.sub(r"[^A-Za-z0-9._@+-]", "_", n)[:64]
    while n[:1] in (".", "-"):
        n = "_" + n[1:]
    return n or "unnamed"


def submissions(folder):
    """[(graded name, path)]: the entries of SUBMISSIONS as the grader names them
    (sorted, a name taken twice made NAME-2, links and other things left out)."""
    taken, out = set(), []
    try:
        entries = sorted(os.listdir(folder))
    except OSError:
        return out
    for e in entries:
        if e.startswith("."):
            continue
        path = os.path.join(folder, e)
        if os.path.islink(path):
            continue
        if e.endswith(ARCHIVES):
            if not os.path.isfile(path):
                continue
        elif not os.path.isdir(path):
            continue
        name, k = safe_name(e), 2
        n = name
        while n in taken:
            n, k = "%s-%d" % (name, k), k + 1
        taken.add(n)
        out.append((n, path))
    return out


def _wanted(path, labs):
    """The lab whose file path is (LAB/name.cu, at most six folders down), or None."""
    parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]
    if len(parts) < 2 or len(parts) > 7 or ".." in parts:
        return None
    lab, name = parts[-2], parts[-1]
    if lab in labs and name == lab.split("-", 1)[1] + ".cu":
        return lab
    return None


def _outside(name):
    """A member path that leaves its archive: the grader takes nothing from such an archive."""
    parts = name.replace("\\", "/").split("/")
    return name.startswith("/") or ".." in parts


def _decode(data):
    if b"\0" in data:
        return None
    return data.decode("utf-8", "replace")


def lab_files(path, labs):
    """{lab: text} of one submission: regular files only, the shortest path of
    each lab; nothing from an archive that holds a path outside itself."""
    found = {}  # lab -> (depth, text)

    def keep(lab, depth, data):
        text = _decode(data)
        if text is not None and (lab not in found or depth < found[lab][0]):
            found[lab] = (depth, text)

    try:
        if os.path.isdir(path):
            top = path.rstrip("/")
            for root, dirs, files in os.walk(top, followlinks=False):
                depth = root[len(top):].count(os.sep)
                dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(root, d))] if depth < 6 else []
                for f in files:
                    full = os.path.join(root, f)
                    lab = _wanted(os.path.relpath(full, top), labs)
                    if not lab:
                        continue
                    st = os.lstat(full)
                    if stat.S_ISREG(st.st_mode) and st.st_size <= MAX_FILE:
                        with open(full, "rb") as fh:
                            keep(lab, depth, fh.read(MAX_FILE + 1))
        elif os.path.getsize(path) > MAX_ARCHIVE:
            return {}
        elif path.endswith(".zip"):
            with zipfile.ZipFile(path) as z:
                if any(_outside(info.filename) for info in z.infolist()):
                    return {}
                for i, info in enumerate(z.infolist()):
                    if i > MAX_MEMBERS:
                        break
                    lab = _wanted(info.filename, labs)
                    mode = info.external_attr >> 16
                    if not lab or info.is_dir() or stat.S_ISLNK(mode) or info.file_size > MAX_FILE:
                        continue
                    keep(lab, info.filename.count("/"), z.read(info)[:MAX_FILE + 1])
        else:
            with tarfile.open(path, "r:*") as t:
                members = []
                for i, m in enumerate(t):
                    if i > MAX_MEMBERS or _outside(m.name):
                        return {}
                    members.append(m)
                for m in members:
                    lab = _wanted(m.name, labs)
                    if not lab or not m.isreg() or m.size > MAX_FILE:
                        continue
                    f = t.extractfile(m)
                    if f is not None:
                        keep(lab, m.name.strip("/").count("/"), f.read(MAX_FILE + 1))
    except (OSError, tarfile.TarError, zipfile.BadZipFile, EOFError, ValueError):
        pass
    return {lab: text for lab, (_, text) in found.items()}


def _normal(line):
    return " ".join(line.split())


def own_code(text, skeleton):
    """text without blank lines and without the skeleton's lines (but for spacing)."""
    skel = {_normal(x) for x in skeleton.splitlines()}
    return "".join(x + "\n" for x in text.splitlines() if _normal(x) and _normal(x) not in skel)


_LINE = re.compile(r"^(\S+) consists for (\d+) % of (\S+) material$")


def compare(texts, reference=None):
    """{(a, b): percent of a's code found in b} for every ordered pair of
    texts ({name: own code}) that sim_c finds alike, the reference included
    under the name None. Raises OSError when sim_c cannot run."""
    exe = sim_path()
    if not exe:
        raise OSError(INSTALL_SIM)
    names = sorted(n for n, t in texts.items() if t.strip())
    files = {}
    result = {}
    with tempfile.TemporaryDirectory(prefix="kit-sim.") as tmp:
        for i, n in enumerate(names):
            files["s%05d.c" % i] = n
        if reference and reference.strip():
            files["reference.c"] = None
        if len(files) < 2:
            return result
        for f, n in files.items():
            with open(os.path.join(tmp, f), "w", encoding="utf-8") as fh:
                fh.write(reference if n is None else texts[n])
        proc = subprocess.run([exe, "-p", "-e", "-a", "-T", "-t", "1"] + sorted(files), cwd=tmp,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
        if proc.returncode != 0:
            raise OSError("sim_c failed (status %d): %s" % (proc.returncode,
                                                           proc.stderr.decode("utf-8", "replace").strip()[:300]))
        for line in proc.stdout.decode("utf-8", "replace").splitlines():
            m = _LINE.match(line.strip())
            if m and m.group(1) in files and m.group(3) in files:
                a, b = files[m.group(1)], files[m.group(3)]
                result[(a, b)] = max(result.get((a, b), 0), int(m.group(2)))
    return result


class LabSimilarity:
    """The similarity list of one lab."""

    def __init__(self, lab):
        self.lab = lab
        self.students = 0     # files taken
        self.with_code = 0    # of them, with code of their own
        self.lines = {}       # name -> lines of own code
        self.pairs = []       # (a, b, a in b %, b in a %, a like ref %, b like ref %)
        self.close_to_reference = []  # (name, % of it in the reference, % of the reference in it)


def analyse(lab, files, skeleton, reference, threshold=60, margin=10):
    """LabSimilarity of files ({name: text}) of lab, discounting skeleton."""
    res = LabSimilarity(lab)
    own = {n: own_code(t, skeleton) for n, t in files.items()}
    ref_own = own_code(reference, skeleton) if reference else ""
    res.students = len(files)
    res.lines = {n: t.count("\n") for n, t in own.items()}
    res.with_code = sum(1 for t in own.values() if t.strip())
    sims = compare(own, ref_own)
    like_ref = {n: sims.get((n, None), 0) for n in own}
    ref_like = {n: sims.get((None, n), 0) for n in own}
    names = sorted(own)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            ab, ba = sims.get((a, b), 0), sims.get((b, a), 0)
            if min(ab, ba) >= threshold and min(ab, ba) > max(like_ref[a], like_ref[b]) + margin:
                res.pairs.append((a, b, ab, ba, like_ref[a], like_ref[b]))
    res.pairs.sort(key=lambda p: (-min(p[2], p[3]), p[0], p[1]))
    for n in names:
        if like_ref[n] >= threshold:
            res.close_to_reference.append((n, like_ref[n], ref_like[n]))
    res.close_to_reference.sort(key=lambda p: (-p[1], p[0]))
    return res
