#!/usr/bin/env python3
"""The Kubernetes recipe (issue 20 item 5), offline: scale-out/k8s/submit.sh renders the three
manifests, which are parsed (PyYAML) and checked for what the issue asks: an Indexed Job with
backoffLimitPerIndex, a podFailurePolicy that fails the Job on exit 2 or 3 and ignores disruptions
(restartPolicy Never, as the API requires), OMP_NUM_THREADS from the pod's CPU request, the shared
ReadWriteMany claim mounted by both Jobs, the installed binary (no source path). No schema validator
(kubeconform, kubectl --dry-run) is available offline here, so the fields are checked by name.
Then submit.sh against a stub kubectl: a Failed shards Job ends the wait at once (exit 2, no merge);
a Complete one is merged and the merge's exit code returned.
  test_k8s.py SOURCE_DIR"""
import os
import stat
import subprocess
import sys
import tempfile
import time

import yaml

src = sys.argv[1]
submit = os.path.join(src, "scale-out", "k8s", "submit.sh")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


tmp = tempfile.mkdtemp()
out = os.path.join(tmp, "rendered")
subprocess.run(["bash", submit, "--image", "registry.example.com/convcheck:1", "--run", "nightly-1",
                "--shards", "4", "--cpus", "6", "--suite", "smoke", "--backends", "reference,optimized",
                "--render-only", out], check=True, stdout=subprocess.DEVNULL)
docs = {}
for name in ("pvc.yaml", "shards-job.yaml", "merge-job.yaml"):
    with open(os.path.join(out, name)) as f:
        text = f.read()
    check("${" not in text.replace("${RESUME", "").replace("${dirs", ""),
          name + ": an unrendered ${VAR}")
    docs[name] = yaml.safe_load(text)

pvc, shards, merge = docs["pvc.yaml"], docs["shards-job.yaml"], docs["merge-job.yaml"]
check(pvc["kind"] == "PersistentVolumeClaim" and pvc["spec"]["accessModes"] == ["ReadWriteMany"],
      "pvc: a ReadWriteMany PersistentVolumeClaim")
spec = shards["spec"]
check(shards["kind"] == "Job" and shards["apiVersion"] == "batch/v1", "shards: a batch/v1 Job")
check(spec["completionMode"] == "Indexed" and spec["completions"] == 4 and spec["parallelism"] == 4,
      "shards: Indexed, 4 completions")
check(isinstance(spec.get("backoffLimitPerIndex"), int) and "backoffLimit" not in spec,
      "shards: backoffLimitPerIndex (and no global backoffLimit)")
rules = spec["podFailurePolicy"]["rules"]
fail = [r for r in rules if r["action"] == "FailJob"]
check(len(fail) == 1 and fail[0]["onExitCodes"]["operator"] == "In" and
      sorted(fail[0]["onExitCodes"]["values"]) == [2, 3] and
      fail[0]["onExitCodes"]["containerName"] == "shard", "shards: FailJob on exit codes 2 and 3")
ignore = [r for r in rules if r["action"] == "Ignore"]
check(len(ignore) == 1 and ignore[0]["onPodConditions"] == [{"type": "DisruptionTarget"}],
      "shards: disruptions ignored")
pod = spec["template"]["spec"]
check(pod["restartPolicy"] == "Never", "shards: restartPolicy Never (podFailurePolicy needs it)")
c = pod["containers"][0]
check(c["name"] == "shard" and c["image"] == "registry.example.com/convcheck:1", "shards: container")
check(str(c["resources"]["requests"]["cpu"]) == "6", "shards: the CPU request")
env = {e["name"]: e for e in c["env"]}
omp = env.get("OMP_NUM_THREADS", {}).get("valueFrom", {}).get("resourceFieldRef", {})
check(omp.get("resource") == "requests.cpu" and omp.get("containerName") == "shard",
      "shards: OMP_NUM_THREADS from the CPU request")
check(env["N"]["value"] == "4" and env["SUITE"]["value"] == "smoke" and
      env["BACKENDS"]["value"] == "reference,optimized", "shards: N, SUITE, BACKENDS")
script = c["args"][0]
check("JOB_COMPLETION_INDEX + 1" in script and "--resume" in script and "--shard" in script and
      "build/" not in script, "shards: shard K from the index, --resume, the installed binary")
for name, job in (("shards", shards), ("merge", merge)):
    p = job["spec"]["template"]["spec"]
    claim = p["volumes"][0]["persistentVolumeClaim"]["claimName"]
    check(claim == pvc["metadata"]["name"], name + ": mounts the claim")
    check(p["containers"][0]["volumeMounts"][0]["mountPath"] == "/reports", name + ": at /reports")
check(merge["spec"]["backoffLimit"] == 0 and "report merge" in merge["spec"]["template"]["spec"][
    "containers"][0]["args"][0], "merge: report merge, no retry")

# A stub kubectl: the Jobs' conditions come from files; every call is logged.
bindir = os.path.join(tmp, "bin")
os.makedirs(bindir)
stub = os.path.join(bindir, "kubectl")
with open(stub, "w") as f:
    f.write("""#!/bin/bash
echo "$*" >>"$STUB_DIR/calls"
case "$1 $2" in
  "get job") cat "$STUB_DIR/$3.conditions" 2>/dev/null ;;
  "get pods") echo -n "${STUB_MERGE_EXIT:-}" ;;
  *) exit 0 ;;
esac
""")
os.chmod(stub, os.stat(stub).st_mode | stat.S_IEXEC)


def scenario(conditions, merge_exit=""):
    d = tempfile.mkdtemp(dir=tmp)
    for job, text in conditions.items():
        with open(os.path.join(d, job + ".conditions"), "w") as f:
            f.write(text)
    env = dict(os.environ, PATH=bindir + ":" + os.environ["PATH"], STUB_DIR=d, CONVCHECK_POLL_S="1",
               STUB_MERGE_EXIT=merge_exit)
    t0 = time.time()
    r = subprocess.run(["bash", submit, "--image", "i:1", "--run", "r1", "--timeout", "60"],
                       env=env, capture_output=True, text=True)
    calls = open(os.path.join(d, "calls")).read() if os.path.exists(os.path.join(d, "calls")) else ""
    return r, time.time() - t0, calls


r, took, calls = scenario({"convcheck-r1-shards": "Failed PodFailurePolicy Container shard exited 2\n"})
check(r.returncode == 2 and took < 20 and "failed" in r.stderr and "merge-job" not in calls,
      "a failed shards Job ends the wait at once, exit 2, no merge (exit %d after %.0f s)"
      % (r.returncode, took))
r, took, calls = scenario({"convcheck-r1-shards": "Complete   \n",
                           "convcheck-r1-merge": "Complete   \n"})
check(r.returncode == 0 and "merge-job.yaml" in calls, "a complete Job is merged (exit %d)" % r.returncode)
r, took, calls = scenario({"convcheck-r1-shards": "Complete   \n",
                           "convcheck-r1-merge": "Failed BackoffLimitExceeded x\n"}, merge_exit="1")
check(r.returncode == 1, "the merge's exit code (1: failures) is returned (got %d)" % r.returncode)

print("k8s: %d failed" % len(failures))
sys.exit(1 if failures else 0)
