#!/usr/bin/env python3
"""classroom_replay.py WORKFLOW EVENT [PAYLOAD]: replays, in the current
folder (a student's repository), what GitHub Actions and GitHub Classroom
do with a Classroom autograding workflow, as far as it runs without GitHub:

  - the job Classroom reads must be named run-autograding-tests (the
    reporter posts points only to that check run: notify-classroom.js of
    classroom-resources/autograding-grading-reporter);
  - the triggers and the guard of Classroom's template (push,
    repository_dispatch; github.actor != 'github-classroom[bot]');
  - each step runs with exactly the environment it gets there: a step of
    classroom-resources/autograding-command-grader gets PATH, HOME,
    FORCE_COLOR, DOTNET_CLI_HOME and DOTNET_NOLOGO (its src/main.js) and
    its score is all or nothing by the exit status; a `run:` step gets
    PATH, HOME, GITHUB_OUTPUT and its own `env:` (nothing else is passed
    here, so a step that needs more must say so);
  - the reporter decodes each runner's <ID>_RESULTS and totals the tests'
    scores where max_score is set (NotifyClassroom), as Classroom shows.

EVENT is push or repository_dispatch:ACTION; PAYLOAD the event's
client_payload (JSON). Prints one JSON line: {"problems": [...],
"points": P, "max_points": M, "steps": {...}} and exits 1 if there are
problems. PyYAML reads the workflow.
"""

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

CHECK_RUN = "run-autograding-tests"
GUARD = "github.actor != 'github-classroom[bot]'"
COMMAND_GRADER_ENV = ("PATH", "HOME")


def main(argv):
    wf = yaml.safe_load(open(argv[1]))
    event = argv[2]
    payload = json.loads(argv[3]) if len(argv) > 3 else {}
    event_name, _, action = event.partition(":")
    problems = []
    # YAML 1.1 reads an unquoted `on` as true.
    on = wf.get("on", wf.get(True))
    triggers = list(on) if isinstance(on, (list, dict)) else [on]
    for t in ("push", "repository_dispatch"):
        if t not in triggers:
            problems.append("no %s trigger" % t)
    jobs = wf.get("jobs", {})
    if CHECK_RUN not in jobs:
        problems.append("no job %s (jobs: %s): the reporter posts no points" % (CHECK_RUN, ", ".join(jobs)))
        job = next(iter(jobs.values()))
    else:
        job = jobs[CHECK_RUN]
    if re.sub(r"\s+", " ", str(job.get("if", ""))).strip() != GUARD:
        problems.append("no guard %r" % GUARD)
    runs_on = job.get("runs-on")
    if "self-hosted" in (runs_on if isinstance(runs_on, list) else [runs_on]):
        problems.append("a student's workflow runs on a self-hosted runner (%s)" % runs_on)
    steps = job.get("steps", [])
    limit = float(job.get("timeout-minutes", 360))
    need = 0.0
    for s in steps:
        w = s.get("with", {}) or {}
        need += float(s.get("timeout-minutes", 0) or 0) + (float(w.get("timeout", 10)) if "command-grader" in s.get("uses", "") else 0)
    if need > limit:
        problems.append("the job's timeout (%g min) is shorter than its steps' (%g min)" % (limit, need))

    context = {
        "github.event_name": event_name,
        "github.event.action": action,
        "github.actor": "student",
        "toJSON(github.event.client_payload)": json.dumps(payload, indent=2),
    }
    outputs = {}

    def evaluate(text):
        def one(m):
            expr = m.group(1).strip()
            if expr in context:
                return context[expr]
            sm = re.match(r"^steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)$", expr)
            if sm:
                return outputs.get(sm.group(1), {}).get(sm.group(2), "")
            if expr.startswith("secrets."):
                return ""  # a student's repository holds no secret of the course
            raise ValueError("an expression this replay does not know: ${{ %s }}" % expr)
        return re.sub(r"\$\{\{(.*?)\}\}", one, str(text))

    for k, v in (wf.get("env") or {}).items():
        context["env." + k] = str(v)
    for k, v in (job.get("env") or {}).items():
        context["env." + k] = evaluate(v)
    # The job's workspace: the repositories its checkouts name (this
    # folder for the student's own; REPLAY_REPOS, a JSON map, for others).
    repo = os.getcwd()
    others = json.loads(os.environ.get("REPLAY_REPOS", "{}"))
    workspace = tempfile.mkdtemp(prefix="replay.", dir=os.environ.get("BATS_TEST_TMPDIR"))
    os.chdir(workspace)
    done = {}
    points = max_points = None
    for s in steps:
        sid = s.get("id", s.get("name", "?"))
        uses = s.get("uses", "")
        env = {k: evaluate(v) for k, v in (s.get("env") or {}).items()}
        w = {k: evaluate(v) for k, v in (s.get("with") or {}).items()}
        if uses.startswith("actions/checkout"):
            src = repo
            if w.get("repository"):
                src = others.get(w["repository"])
                if not src:
                    problems.append("checks out %s, which this replay was not given" % w["repository"])
                    continue
            dest = os.path.join(workspace, w.get("path", "."))
            subprocess.run(["cp", "-a", src + "/.", dest + "/"] if os.path.isdir(dest) else ["cp", "-a", src, dest], check=True)
            done[sid] = "checked out"
            continue
        if "autograding-command-grader" in uses:
            run_env = {k: os.environ[k] for k in COMMAND_GRADER_ENV if k in os.environ}
            run_env.update(FORCE_COLOR="true", DOTNET_CLI_HOME="/tmp", DOTNET_NOLOGO="true")
            status = "pass"
            for cmd in (w.get("setup-command"), w.get("command")):
                if not cmd:
                    continue
                try:
                    p = subprocess.run(["/bin/sh", "-c", cmd], env=run_env, timeout=float(w.get("timeout", 10)) * 60,
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                    if p.returncode != 0:
                        status = "fail"
                        sys.stderr.write(p.stdout.decode("utf-8", "replace")[-2000:])
                        break
                except subprocess.TimeoutExpired:
                    status = "error"
                    break
            max_score = int(w.get("max-score") or 0)
            result = {"version": 1, "status": status, "max_score": max_score,
                      "tests": [{"name": w.get("test-name"), "status": status,
                                 "score": max_score if status == "pass" else 0}]}
            outputs[sid] = {"result": base64.b64encode(json.dumps(result).encode()).decode()}
            done[sid] = status
            continue
        if "autograding-grading-reporter" in uses:
            total = maximum = 0.0
            for runner in (w.get("runners") or "").split(","):
                key = runner.strip().upper() + "_RESULTS"
                if not env.get(key):
                    problems.append("the reporter finds no %s" % key)
                    continue
                res = json.loads(base64.b64decode(env[key]).decode("utf-8"))
                if not res.get("max_score"):
                    continue
                maximum += res["max_score"]
                total += sum(t.get("score", 0) for t in res["tests"])
            if CHECK_RUN in jobs and maximum:
                points, max_points = total, maximum
            done[sid] = "reported %g/%g" % (total, maximum)
            continue
        if "run" in s:
            with tempfile.NamedTemporaryFile("r", delete=False) as out:
                out_path = out.name
            run_env = {k: os.environ[k] for k in ("PATH", "HOME") if k in os.environ}
            run_env.update(env)
            run_env["GITHUB_OUTPUT"] = out_path
            p = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", evaluate(s["run"])],
                               env=run_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=float(s.get("timeout-minutes", 360)) * 60)
            sys.stderr.write(p.stdout.decode("utf-8", "replace")[-3000:])
            outputs[sid] = {}
            for line in open(out_path).read().splitlines():
                k, _, v = line.partition("=")
                outputs[sid][k] = v
            os.unlink(out_path)
            done[sid] = "exit %d" % p.returncode
            if p.returncode != 0:
                problems.append("step %s exited with status %d" % (sid, p.returncode))
            continue
        problems.append("a step this replay does not know: %s" % uses)
    os.chdir(repo)
    shutil.rmtree(workspace, ignore_errors=True)
    print(json.dumps({"problems": problems, "points": points, "max_points": max_points, "steps": done}))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
