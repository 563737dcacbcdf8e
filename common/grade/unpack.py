#!/usr/bin/env python3
"""unpack.py [options] SUBMISSION DEST LAB...: takes the lab files of one
submission into DEST/LAB/name.cu, and nothing else.

SUBMISSION is a folder, or a .tar, .tar.gz, .tgz, .tar.xz or .zip archive
of one. grade-class.sh runs this inside the sandbox (SUBMISSION read-only,
DEST the only place it may write); Gradescope's run_autograder runs it on
the upload.

What is taken, and only that:
  - regular files at the path of a lab file, LAB/name.cu, at most five
    folders down (with --loose, also name.cu alone: an upload of single
    files); the shortest path where there are several, then the first in
    order of names;
  - never a symbolic link, a hard link, a device, a fifo, or anything under
    a link: a folder is walked without following links, and a file is
    taken only where its resolved path lies inside the submission;
  - from an archive, only the lab files' bytes are read: nothing else is
    written anywhere. An archive naming a path outside itself (an absolute
    path or ..) is refused whole.
Limits: a lab file is read to at most --file-limit bytes and one more (so
that the grader still refuses a file that is too large); all lab files
together at most --max-bytes; an archive's members at most --scan-bytes
declared bytes and --max-members members.

Prints the reason and exits 1 when no lab file can be taken; exits 0 and
prints nothing otherwise. --digest FILE writes the SHA-256 of the files
taken (lab names and contents), which names exactly what was graded.
"""

import argparse
import hashlib
import os
import stat
import sys
import tarfile
import zipfile

ARCHIVES = (".tar.gz", ".tar.xz", ".tgz", ".tar", ".zip")
MAX_DEPTH = 6  # LAB/name.cu five folders down: six path parts


class Refused(Exception):
    pass


def q(path):
    """A path for a message: one line, what cannot be printed escaped."""
    return path.encode("utf-8", "surrogateescape").decode("ascii", "backslashreplace").replace("\n", "\\n")


def match(parts, labs, loose):
    """The lab a relative path (its parts) is the file of, with how well:
    0 for LAB/name.cu, 1 for name.cu alone (--loose)."""
    if not parts or len(parts) > MAX_DEPTH:
        return None
    for lab in labs:
        name = lab.split("-", 1)[1] + ".cu"
        if parts[-1] != name:
            continue
        if len(parts) >= 2 and parts[-2] == lab:
            return lab, 0
        if loose:
            return lab, 1
    return None


def pick(candidates):
    """LAB -> the candidate to take: exact paths first, then the shortest,
    then the first by name."""
    best = {}
    for lab, how, parts, ref in candidates:
        key = (how, len(parts), "/".join(parts))
        if lab not in best or key < best[lab][0]:
            best[lab] = (key, parts, ref)
    return best


def from_folder(root, labs, loose, limit):
    root_real = os.path.realpath(root)
    candidates, links = [], []
    for top, dirs, files in os.walk(root_real, topdown=True, followlinks=False):
        rel = os.path.relpath(top, root_real)
        depth = 0 if rel == "." else len(rel.split(os.sep))
        for d in dirs:
            if os.path.islink(os.path.join(top, d)):
                links.append("/".join(([] if rel == "." else rel.split(os.sep)) + [d]))
        dirs[:] = sorted(d for d in dirs if depth + 1 < MAX_DEPTH and not os.path.islink(os.path.join(top, d)))
        for f in sorted(files):
            path = os.path.join(top, f)
            parts = ([] if rel == "." else rel.split(os.sep)) + [f]
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                links.append("/".join(parts))
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            real = os.path.realpath(path)
            if not real.startswith(root_real + os.sep):
                continue
            m = match(parts, labs, loose)
            if m:
                candidates.append((m[0], m[1], parts, real))
    taken = {}
    for lab, (_, parts, real) in pick(candidates).items():
        # Opened without following a link: the file cannot have been
        # swapped for one since it was looked at.
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                continue
            taken[lab] = f.read(limit + 1)
    return taken, links


def member_parts(name):
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
    if name.startswith("/") or ".." in parts:
        raise Refused("the archive holds a path outside itself (%s): not unpacked" % q(name))
    return parts


def from_tar(path, labs, loose, limit, scan_bytes, max_members):
    candidates, links = [], []
    declared = 0
    try:
        with tarfile.open(path, "r:*") as tar:
            for n, m in enumerate(tar):
                if n >= max_members:
                    raise Refused("the archive holds more than %d entries: not unpacked" % max_members)
                parts = member_parts(m.name)
                if m.issym() or m.islnk():
                    links.append("/".join(parts))
                    continue
                declared += max(m.size, 0)
                if declared > scan_bytes:
                    raise Refused("the archive holds more than %d bytes: not unpacked" % scan_bytes)
                hit = match(parts, labs, loose) if m.isreg() else None
                if hit:
                    candidates.append((hit[0], hit[1], parts, m))
            taken = {}
            for lab, (_, parts, m) in pick(candidates).items():
                f = tar.extractfile(m)
                taken[lab] = f.read(limit + 1) if f else b""
            return taken, links
    except Refused:
        raise
    except Exception:
        raise Refused("a damaged archive")


def from_zip(path, labs, loose, limit, scan_bytes, max_members):
    candidates, links = [], []
    declared = 0
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
            if len(infos) > max_members:
                raise Refused("the archive holds more than %d entries: not unpacked" % max_members)
            for info in infos:
                parts = member_parts(info.filename)
                mode = info.external_attr >> 16
                if stat.S_ISLNK(mode):
                    links.append("/".join(parts))
                    continue
                if info.is_dir() or (mode and not stat.S_ISREG(mode)):
                    continue
                declared += info.file_size
                if declared > scan_bytes:
                    raise Refused("the archive holds more than %d bytes: not unpacked" % scan_bytes)
                hit = match(parts, labs, loose)
                if hit:
                    candidates.append((hit[0], hit[1], parts, info))
            taken = {}
            for lab, (_, parts, info) in pick(candidates).items():
                # Reads at most limit + 1 bytes, whatever the entry claims.
                with z.open(info) as f:
                    taken[lab] = f.read(limit + 1)
            return taken, links
    except Refused:
        raise
    except Exception:
        raise Refused("a damaged .zip archive")


def main(argv):
    ap = argparse.ArgumentParser(description="Takes a submission's lab files.")
    ap.add_argument("--loose", action="store_true", help="also take name.cu alone (an upload of single files)")
    ap.add_argument("--file-limit", type=int, default=262144, help="bytes a lab file may have")
    ap.add_argument("--max-bytes", type=int, default=0, help="bytes of all lab files together (default: a full file per lab)")
    ap.add_argument("--scan-bytes", type=int, default=1 << 30, help="declared bytes of an archive's entries read through")
    ap.add_argument("--max-members", type=int, default=100000, help="entries an archive may hold")
    ap.add_argument("--digest", metavar="FILE", help="write the SHA-256 of what was taken to FILE")
    ap.add_argument("submission")
    ap.add_argument("dest")
    ap.add_argument("labs", nargs="+")
    a = ap.parse_args(argv[1:])
    max_bytes = a.max_bytes or len(a.labs) * (a.file_limit + 1)
    src = a.submission
    try:
        if not os.path.isdir(a.dest):
            raise Refused("no folder %s" % q(a.dest))
        if src.endswith(ARCHIVES):
            if os.path.islink(src) or not os.path.isfile(src):
                raise Refused("the archive is not a regular file")
            if src.endswith(".zip"):
                taken, links = from_zip(src, a.labs, a.loose, a.file_limit, a.scan_bytes, a.max_members)
            else:
                taken, links = from_tar(src, a.labs, a.loose, a.file_limit, a.scan_bytes, a.max_members)
        else:
            if os.path.islink(src) or not os.path.isdir(src):
                raise Refused("neither a folder nor an archive (.tar, .tar.gz, .tgz, .tar.xz, .zip)")
            taken, links = from_folder(src, a.labs, a.loose, a.file_limit)
        if not taken:
            link = sorted(links)[0] if links else ""
            raise Refused("no lab files (labs/NN-name/name.cu, or NN-name/name.cu) in the submission"
                          + (": a symbolic link is never taken (%s)" % q(link) if link else ""))
        total = sum(len(b) for b in taken.values())
        if total > max_bytes:
            raise Refused("its lab files hold %d bytes, more than the %d a submission may give" % (total, max_bytes))
        digest = hashlib.sha256()
        for lab in sorted(taken):
            name = lab.split("-", 1)[1] + ".cu"
            os.makedirs(os.path.join(a.dest, lab), exist_ok=True)
            out = os.path.join(a.dest, lab, name)
            fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o644)
            with os.fdopen(fd, "wb") as f:
                f.write(taken[lab])
            digest.update(lab.encode() + b"\0" + hashlib.sha256(taken[lab]).hexdigest().encode() + b"\0")
        if a.digest:
            with open(a.digest, "w") as f:
                f.write("sha256:" + digest.hexdigest() + "\n")
    except Refused as e:
        print(e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
