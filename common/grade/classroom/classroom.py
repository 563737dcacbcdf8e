#!/usr/bin/env python3
"""classroom.py: GitHub Classroom and the kit, on both sides of the trust
boundary (README: "GitHub Classroom"). Python 3.6+, standard library only.

The instructor's side, in grade-classroom.yml on the course's GPU runner
(a token that reads the organization's repositories in GH_TOKEN):

  fetch --org ORG --prefix PREFIX [--before TIME] DEST
        each student repository PREFIX-LOGIN of ORG as it was at TIME (where
        its default branch pointed then, by the times GitHub recorded the
        pushes, not the commits' own dates; default: now), as
        DEST/LOGIN.tar.gz: a folder of submissions for make grade-class,
        which takes their lab files and nothing else
  publish --org ORG --prefix PREFIX OUT
        sends each student graded in full in OUT (make grade-class) their
        points, per lab, to their repository (a repository_dispatch event
        "kit-grades"), where classroom.yml hands them to Classroom
  verify --org ORG --prefix PREFIX OUT
        lists the repositories whose Classroom points differ from OUT's
        grades (a workflow a student edited shows other points)

The students' side, in classroom.yml (GitHub's hosted runner, no secret):

  result
        the autograding reporter's input for this run, in the step output
        `result`: on a push, feedback (the text rules of each lab file, no
        points); on the instructor's "kit-grades" event, the points sent
        (KIT_EVENT, KIT_ACTION and KIT_GRADES name the event).

GitHub's REST API: GITHUB_API_URL (default https://api.github.com).
"""

import base64
import calendar
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
KIT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
EVENT_TYPE = "kit-grades"
CHECK_NAME = "run-autograding-tests"
MAX_ARCHIVE = 64 << 20


def fail(msg, status=1):
    sys.stderr.write("classroom.py: %s\n" % msg)
    return status


# ---------------------------------------------------------------------------
# GitHub's REST API
# ---------------------------------------------------------------------------


class Api:
    def __init__(self):
        self.base = os.environ.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
        self.token = os.environ.get("GH_TOKEN") or os.environ.get("GITHUB_TOKEN") or ""

    def request(self, method, path, body=None, raw=False, limit=None, headers=None):
        """The response's JSON (its bytes where raw); where headers is a
        dict, the response's headers are put in it."""
        url = path if path.startswith("http") else self.base + path
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("Accept", "application/vnd.github+json")
        req.add_header("X-GitHub-Api-Version", "2022-11-28")
        req.add_header("User-Agent", "cuda-lab-kit-grader")
        if self.token:
            req.add_header("Authorization", "Bearer " + self.token)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        for attempt in range(3):
            try:
                with urllib.request.urlopen(req, timeout=120) as r:
                    if headers is not None:
                        headers.update((k.lower(), v) for k, v in r.headers.items())
                    payload = r.read(limit + 1 if limit else -1)
                    if limit and len(payload) > limit:
                        raise ValueError("more than %d bytes" % limit)
                    if raw:
                        return payload
                    return json.loads(payload.decode("utf-8")) if payload else None
            except urllib.error.HTTPError as e:
                if e.code in (502, 503, 504) and attempt < 2:
                    time.sleep(2 ** attempt)
                    continue
                raise

    def paged(self, path):
        page = 1
        while True:
            sep = "&" if "?" in path else "?"
            items = self.request("GET", "%s%sper_page=100&page=%d" % (path, sep, page))
            if not items:
                return
            for item in items:
                yield item
            if len(items) < 100:
                return
            page += 1

    def linked(self, path):
        """Every item of a list GitHub pages with Link headers (rel="next"),
        as its cursor-paged lists do."""
        while path:
            h = {}
            items = self.request("GET", path, headers=h) or []
            for item in items:
                yield item
            m = re.search(r'<([^>]+)>;\s*rel="next"', h.get("link", ""))
            path = m.group(1) if m else None


# What moves a branch (GitHub's repository activity list): after each, the
# branch points at the activity's "after" (all zeros once deleted).
BRANCH_MOVES = ("push", "force_push", "pr_merge", "merge_queue_merge", "branch_creation", "branch_deletion")


def head_at(api, full, branch, deadline):
    """The commit the branch pointed to at the deadline, by the times GitHub
    recorded the pushes (a commit's own date is the student's to set):
    (sha, the push's time), or (None, None) where nothing was pushed by then
    or the branch had been deleted. The list comes newest first: the first
    move at or before the deadline is the answer."""
    path = "/repos/%s/activity?ref=%s&direction=desc&per_page=100" % (
        full, urllib.parse.quote("refs/heads/" + branch))
    for a in api.linked(path):
        if a.get("activity_type") not in BRANCH_MOVES or not a.get("after") or not a.get("timestamp"):
            continue
        if parse_time(a["timestamp"]) <= deadline:
            if set(a["after"]) == {"0"}:
                return None, None
            return a["after"], a["timestamp"]
    return None, None


def parse_time(text):
    """Seconds since the epoch of an ISO 8601 time: 2026-12-01T23:59:00Z,
    or with +HH:MM (none: UTC); ValueError otherwise."""
    m = re.match(r"^(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d)(?::(\d\d)(?:\.\d+)?)?(Z|[+-]\d\d:?\d\d)?$",
                 text.strip())
    if not m:
        raise ValueError("not an ISO 8601 time: %r" % text)
    y, mo, d, h, mi = (int(m.group(i)) for i in range(1, 6))
    t = calendar.timegm((y, mo, d, h, mi, int(m.group(6) or 0), 0, 0, 0))
    z = m.group(7)
    if z and z != "Z":
        off = int(z[1:3]) * 3600 + int(z[-2:]) * 60
        t -= off if z[0] == "+" else -off
    return t


def student_repos(api, org, prefix):
    """(login, repository) of the assignment: Classroom names each student's
    repository PREFIX-LOGIN."""
    out = []
    for repo in api.paged("/orgs/%s/repos?type=all" % urllib.parse.quote(org)):
        name = repo.get("name", "")
        if name.startswith(prefix + "-") and len(name) > len(prefix) + 1:
            out.append((name[len(prefix) + 1:], repo))
    return sorted(out, key=lambda x: x[0])


def safe_login(login):
    # GitHub logins are letters, digits and single hyphens; anything else
    # is not taken as a file name.
    return login if re.match(r"^[A-Za-z0-9][A-Za-z0-9-]{0,38}$", login) else None


# ---------------------------------------------------------------------------
# The instructor's side
# ---------------------------------------------------------------------------


def parse_options(args, names):
    opts, rest = {}, []
    while args:
        if args[0] in names and len(args) > 1:
            opts[args[0]] = args[1]
            args = args[2:]
        else:
            rest.append(args[0])
            args = args[1:]
    return opts, rest


def cmd_fetch(args):
    opts, rest = parse_options(args, ("--org", "--prefix", "--before"))
    if "--org" not in opts or "--prefix" not in opts or len(rest) != 1:
        return fail("usage: classroom.py fetch --org ORG --prefix PREFIX [--before TIME] DEST", 64)
    dest = rest[0]
    deadline = None
    if "--before" in opts:
        try:
            deadline = parse_time(opts["--before"])
        except ValueError:
            return fail("--before %s: not a time (e.g. 2026-12-01T23:59:00Z)" % opts["--before"], 64)
    os.makedirs(dest, exist_ok=True)
    api = Api()
    manifest, missing = {}, 0
    for login, repo in student_repos(api, opts["--org"], opts["--prefix"]):
        if not safe_login(login):
            print("classroom: %r: not a GitHub login, skipped" % login)
            continue
        full = repo["full_name"]
        branch = repo.get("default_branch") or "main"
        if "--before" in opts:
            # At the deadline by when it was pushed, never by the commit's
            # date, which a student's git sets (a late commit back-dated).
            sha, pushed = head_at(api, full, branch, deadline)
        else:
            pushed = None
            try:
                commits = api.request("GET", "/repos/%s/commits?sha=%s&per_page=1" % (
                    full, urllib.parse.quote(branch))) or []
            except urllib.error.HTTPError as e:
                if e.code != 409:  # 409: an empty repository
                    raise
                commits = []
            sha = commits[0]["sha"] if commits else None
        if not sha:
            print("classroom: %s: %s: nothing handed in" % (
                login, "nothing pushed by " + opts["--before"] if "--before" in opts else "no commit"))
            missing += 1
            continue
        try:
            data = api.request("GET", "/repos/%s/tarball/%s" % (full, sha), raw=True, limit=MAX_ARCHIVE)
        except ValueError:
            print("classroom: %s: the repository's archive is over %d MiB: not fetched" % (login, MAX_ARCHIVE >> 20))
            missing += 1
            continue
        path = os.path.join(dest, login + ".tar.gz")
        with open(path + ".part", "wb") as f:
            f.write(data)
        os.replace(path + ".part", path)
        manifest[login] = {"repository": full, "commit": sha}
        if pushed:
            manifest[login]["pushed"] = pushed
        print("classroom: %s: %s at %s" % (login, full, sha[:12]))
    # Entries starting with a dot are not submissions (grade-class skips them).
    with open(os.path.join(dest, ".fetched.json"), "w") as f:
        json.dump(manifest, f, indent=2)
    print("classroom: %d repositories fetched into %s; %d with nothing to grade" % (len(manifest), dest, missing))
    return 0


def read_record(out, name):
    try:
        with open(os.path.join(out, "students", name, "record.json"), encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def payload(rec):
    """A repository_dispatch client_payload (at most 10 top-level keys)."""
    return {
        "kit": 1,
        "total": rec["total"],
        "max_points": rec["max_points"],
        "grading_seed": rec.get("grading_seed", ""),
        "mode": rec.get("mode", "")[:300],
        "labs": [{"lab": l["lab"], "verdict": l["verdict"], "points": l["points"], "max_points": l["max_points"],
                  "reason": (l.get("reason") or "")[:300]} for l in rec["labs"]],
    }


def graded_students(out):
    d = os.path.join(out, "students")
    for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        rec = read_record(out, name)
        if rec and not os.path.exists(os.path.join(d, name, "not-graded")) and not rec.get("skipped"):
            yield name, rec


def cmd_publish(args):
    opts, rest = parse_options(args, ("--org", "--prefix"))
    if "--org" not in opts or "--prefix" not in opts or len(rest) != 1:
        return fail("usage: classroom.py publish --org ORG --prefix PREFIX OUT", 64)
    api, sent, failed = Api(), 0, 0
    for name, rec in graded_students(rest[0]):
        repo = "%s/%s-%s" % (opts["--org"], opts["--prefix"], name)
        try:
            api.request("POST", "/repos/%s/dispatches" % repo, {"event_type": EVENT_TYPE, "client_payload": payload(rec)})
            sent += 1
        except urllib.error.HTTPError as e:
            print("classroom: %s: not sent (%s %s)" % (repo, e.code, e.reason))
            failed += 1
    print("classroom: points sent to %d repositories%s" % (sent, "; %d not sent" % failed if failed else ""))
    return 1 if failed else 0


def cmd_verify(args):
    opts, rest = parse_options(args, ("--org", "--prefix"))
    if "--org" not in opts or "--prefix" not in opts or len(rest) != 1:
        return fail("usage: classroom.py verify --org ORG --prefix PREFIX OUT", 64)
    api, differ = Api(), 0
    for name, rec in graded_students(rest[0]):
        repo = "%s/%s-%s" % (opts["--org"], opts["--prefix"], name)
        info = api.request("GET", "/repos/%s" % repo)
        runs = api.request("GET", "/repos/%s/commits/%s/check-runs?check_name=%s" % (
            repo, urllib.parse.quote(info.get("default_branch") or "main"), CHECK_NAME)) or {}
        shown = None
        for run in runs.get("check_runs", []):
            try:
                shown = json.loads((run.get("output") or {}).get("text") or "")
                break
            except ValueError:
                continue
        want = (round(rec["total"], 2), round(rec["max_points"], 2))
        got = (round(float(shown.get("totalPoints", -1)), 2), round(float(shown.get("maxPoints", -1)), 2)) if shown else None
        if got != want:
            differ += 1
            print("classroom: %s: Classroom shows %s, the grade is %s/%s" % (
                repo, "%s/%s" % got if got else "no points", want[0], want[1]))
    print("classroom: %d repositories whose Classroom points differ from the grades" % differ)
    return 1 if differ else 0


# ---------------------------------------------------------------------------
# The students' side
# ---------------------------------------------------------------------------


def runner_result(status, max_score, tests):
    """The reporter's input: what GitHub's command grader writes
    (version 1, status, max_score, tests)."""
    return {"version": 1, "status": status, "max_score": max_score, "tests": tests}


def test_entry(name, status, score, message, filename="", line=0):
    return {"name": name, "status": status, "score": score, "message": message, "test_code": "",
            "filename": filename, "line_no": line, "duration": 0}


def feedback():
    """On a push: each lab file's text rules (the grader's first check),
    feedback only: no points (max_score 0: the reporter posts none)."""
    script = r'''
        source common/grade/lib.sh || exit 3
        conf_load common/grade/grading.conf || exit 3
        for lab in $(kit_labs .); do
            f=labs/$lab/${lab#*-}.cu
            [ -f "$f" ] || continue
            source_check "$f" "$lab"
            printf '%s\0%s\0%s\0%s\0' "$lab" "$f" "$rule_line" "$rule_reason"
        done'''
    p = subprocess.run(["bash", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        return runner_result("error", 0, [test_entry("lab files", "error", 0, p.stderr.decode("utf-8", "replace")[:500])])
    f = p.stdout.split(b"\0")
    tests = []
    for i in range(0, len(f) - 3, 4):
        lab, path, line, reason = (x.decode("utf-8", "replace") for x in f[i:i + 4])
        if reason:
            tests.append(test_entry(lab + ": text rules", "fail", 0, "%s%s: %s" % (path, ":" + line if line else "", reason),
                                    path, int(line) if line.isdigit() else 0))
        else:
            tests.append(test_entry(lab + ": text rules", "pass", 0,
                                    "keeps the text rules; it is built, run and timed on the course's GPU machine", path))
    if not tests:
        tests.append(test_entry("lab files", "fail", 0, "no lab file (labs/NN-name/name.cu) in this repository"))
    status = "pass" if all(t["status"] == "pass" for t in tests) else "fail"
    return runner_result(status, 0, tests)


def grades(text):
    """The points the instructor's grading sent (the event's payload)."""
    try:
        p = json.loads(text)
        labs = p["labs"]
        tests = [test_entry(l["lab"], "pass" if l["verdict"] == "PASS" else "fail", float(l["points"] or 0),
                            "%s %s/%s%s" % (l["verdict"], l["points"] if l["points"] is not None else "-", l["max_points"],
                                            ": " + l["reason"] if l.get("reason") else ""))
                 for l in labs]
        status = "pass" if all(t["status"] == "pass" for t in tests) else "fail"
        return runner_result(status, float(p["max_points"]), tests)
    except (ValueError, KeyError, TypeError):
        return runner_result("error", 0, [test_entry("grades", "error", 0, "the grades sent could not be read")])


def cmd_result(args):
    event = os.environ.get("KIT_EVENT", "")
    if event == "repository_dispatch" and os.environ.get("KIT_ACTION", "") == EVENT_TYPE:
        res = grades(os.environ.get("KIT_GRADES", ""))
    else:
        res = feedback()
    for t in res["tests"]:
        print("%s %s%s" % ("ok  " if t["status"] == "pass" else "FAIL", t["name"],
                           " (%s points)" % t["score"] if res["max_score"] else "") + ": " + t["message"])
    encoded = base64.b64encode(json.dumps(res).encode()).decode()
    out = os.environ.get("GITHUB_OUTPUT")
    if not out:
        return fail("GITHUB_OUTPUT is not set (this runs as a step of a GitHub Actions job)", 3)
    with open(out, "a") as f:
        f.write("result=%s\n" % encoded)
    return 0


def main(argv):
    commands = {"fetch": cmd_fetch, "publish": cmd_publish, "verify": cmd_verify, "result": cmd_result}
    if len(argv) < 2 or argv[1] not in commands:
        sys.stderr.write(__doc__)
        return 64
    return commands[argv[1]](argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
