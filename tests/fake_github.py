#!/usr/bin/env python3
"""fake_github.py STATE PORTFILE: the parts of GitHub's REST API that
common/grade/classroom/classroom.py uses, served from STATE (JSON) on a
free local port (written to PORTFILE), for the tests:

  GET  /orgs/ORG/repos                      the repositories of STATE
  GET  /repos/ORG/REPO                      one (its default branch)
  GET  /repos/ORG/REPO/commits?sha&until    its commits, newest first
  GET  /repos/ORG/REPO/activity?ref&direction&per_page&after
                                            what moved its branches, newest first
                                            (direction=desc): each commit pushed at
                                            its "pushed" time (its date where none)
                                            to its "ref" (the default branch where
                                            none) by its "type" (push where none),
                                            one a page (so that the paging is
                                            exercised), by cursor (Link)
  GET  /repos/ORG/REPO/tarball/SHA          302 to /codeload/..., as GitHub does
  GET  /repos/ORG/REPO/commits/REF/check-runs?check_name=
                                            the check run Classroom shows
  POST /repos/ORG/REPO/dispatches           appended to STATE's "dispatched" log

STATE: {"org": ORG, "token": T, "repos": [{"name", "default_branch",
"commits": [{"sha", "date", "pushed", "ref", "type", "tarball"}],
"classroom_points": [P, M]}],
"log": FILE}. Every request must carry "Authorization: Bearer T".
"""

import json
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer

STATE = json.load(open(sys.argv[1]))
REPOS = {r["name"]: r for r in STATE["repos"]}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send(self, code, body=None, headers=()):
        data = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def authorised(self):
        if self.headers.get("Authorization") != "Bearer " + STATE["token"]:
            self.send(401, {"message": "Bad credentials"})
            return False
        return True

    def repo(self, parts):
        if len(parts) < 3 or parts[0] != "repos" or parts[1] != STATE["org"] or parts[2] not in REPOS:
            self.send(404, {"message": "Not Found"})
            return None
        return REPOS[parts[2]]

    def do_GET(self):
        if not self.authorised():
            return
        url = urllib.parse.urlparse(self.path)
        parts = [p for p in url.path.split("/") if p]
        q = dict(urllib.parse.parse_qsl(url.query))
        if parts[:3] == ["orgs", STATE["org"], "repos"]:
            page, per = int(q.get("page", 1)), int(q.get("per_page", 30))
            repos = [{"name": r["name"], "full_name": "%s/%s" % (STATE["org"], r["name"]),
                      "default_branch": r.get("default_branch", "main")} for r in STATE["repos"]]
            return self.send(200, repos[(page - 1) * per: page * per])
        if parts[:1] == ["codeload"]:
            r = REPOS[parts[2]]
            c = [c for c in r["commits"] if c["sha"] == parts[3]][0]
            return self.send(200, open(c["tarball"], "rb").read(), [("Content-Type", "application/x-gzip")])
        r = self.repo(parts)
        if r is None:
            return
        if len(parts) == 3:
            return self.send(200, {"name": r["name"], "default_branch": r.get("default_branch", "main")})
        if parts[3] == "commits" and len(parts) == 4:
            commits = sorted(r["commits"], key=lambda c: c["date"], reverse=True)
            if "until" in q:
                commits = [c for c in commits if c["date"] <= q["until"]]
            if not r["commits"]:
                return self.send(409, {"message": "Git Repository is empty."})
            return self.send(200, [{"sha": c["sha"], "commit": {"committer": {"date": c["date"]}}}
                                   for c in commits[: int(q.get("per_page", 30))]])
        if parts[3] == "activity" and len(parts) == 4:
            branch = "refs/heads/" + r.get("default_branch", "main")
            pushes = sorted(r["commits"], key=lambda c: c.get("pushed", c["date"]))
            acts, head = [], {}
            for i, c in enumerate(pushes):
                ref = c.get("ref", branch)
                acts.append({"id": i, "before": head.get(ref, "0" * 40), "after": c["sha"], "ref": ref,
                             "timestamp": c.get("pushed", c["date"]), "activity_type": c.get("type", "push")})
                head[ref] = c["sha"]
            acts = [a for a in acts if a["ref"] == q.get("ref", a["ref"])]
            if q.get("direction", "desc") == "desc":
                acts.reverse()
            at, per = int(q.get("after", 0)), 1
            page, links = acts[at: at + per], []
            if at + per < len(acts):
                links.append(("Link", '<http://127.0.0.1:%d/repos/%s/%s/activity?ref=%s&per_page=%d&after=%d>; '
                              'rel="next"' % (self.server.server_port, STATE["org"], r["name"],
                                              urllib.parse.quote(branch), per, at + per)))
            return self.send(200, page, links)
        if parts[3] == "tarball":
            return self.send(302, None, [("Location", "http://127.0.0.1:%d/codeload/%s/%s/%s" % (
                self.server.server_port, STATE["org"], r["name"], parts[4]))])
        if parts[3] == "commits" and parts[-1] == "check-runs":
            runs = []
            if r.get("classroom_points") and q.get("check_name") == "run-autograding-tests":
                p, m = r["classroom_points"]
                runs.append({"name": "run-autograding-tests",
                             "output": {"text": json.dumps({"totalPoints": p, "maxPoints": m})}})
            return self.send(200, {"total_count": len(runs), "check_runs": runs})
        self.send(404, {"message": "Not Found"})

    def do_POST(self):
        if not self.authorised():
            return
        parts = [p for p in urllib.parse.urlparse(self.path).path.split("/") if p]
        r = self.repo(parts)
        if r is None:
            return
        if parts[3:] == ["dispatches"]:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            with open(STATE["log"], "a") as f:
                f.write(json.dumps({"repo": r["name"], "body": body}) + "\n")
            return self.send(204)
        self.send(404, {"message": "Not Found"})


server = HTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[2], "w") as f:
    f.write(str(server.server_port))
server.serve_forever()
