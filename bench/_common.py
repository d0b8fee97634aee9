"""Helpers shared by the benchmark scripts in bench/ (paths, data loading, percentiles, memory, tables)."""
from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

PROJECT_ROOT = Path(__file__).resolve().parent.parent
if str(PROJECT_ROOT) not in sys.path:
    sys.path.insert(0, str(PROJECT_ROOT))

SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"
LAWREFBOOK = SHARED_DATA / "lawrefbook" / "lawrefbook_articles.jsonl.gz"
STARD_QRELS = SHARED_DATA / "stard" / "stard_qrels_lawrefbook.jsonl"
STARD_SUBSET_KEYS = SHARED_DATA / "stard" / "stard_subset_11k.keys.jsonl"
PIPL_EVAL = PROJECT_ROOT / "eval" / "pipl_eval.jsonl"
MODELS_DIR = PROJECT_ROOT / "models"
RESULTS_DIR = PROJECT_ROOT / "bench" / "results"


def env_with_first_path(first: str | Path | None) -> dict[str, str]:
    """This process's environment with `first` (e.g. an unpacked wheel of another llama.cpp build) put before
    everything else on a child's PYTHONPATH."""
    env = dict(os.environ)
    if first:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(first), env.get("PYTHONPATH"))))
    return env


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class Timer:
    """`with Timer() as t: ...` then t.s (seconds)."""

    def __enter__(self) -> Timer:
        self._c0 = time.process_time()
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.s = time.perf_counter() - self._t0
        self.cpu_s = time.process_time() - self._c0  # CPU time of all threads of this process


def pctl(values_ms: Sequence[float]) -> dict:
    """p50 / p95 / mean / max of a list of milliseconds (numpy's linear interpolation)."""
    import numpy as np

    if not len(values_ms):
        return {"n": 0, "p50_ms": None, "p95_ms": None, "mean_ms": None, "max_ms": None}
    a = np.asarray(values_ms, dtype=np.float64)
    return {"n": int(a.size), "p50_ms": round(float(np.percentile(a, 50)), 3),
            "p95_ms": round(float(np.percentile(a, 95)), 3), "mean_ms": round(float(a.mean()), 3),
            "max_ms": round(float(a.max()), 3)}


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far (ru_maxrss is in KiB on Linux)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def current_rss_mb() -> float:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return float("nan")


def loadavg() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def load_stard(only_all_mapped: bool = True) -> list[dict]:
    """STARD questions mapped onto LawRefBook: {"id", "query", "gold": {"path#第X条", ...}}."""
    rows = []
    with open(STARD_QRELS, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            if only_all_mapped and not r.get("all_gold_mapped"):
                continue
            gold = {f"{g['lrb_path']}#{g['lrb_article']}" for g in r["gold"] if g.get("lrb_path")}
            rows.append({"id": r["query_id"], "query": r["query"], "gold": gold})
    return rows


def spread(rows: list, n: int) -> list:
    """n rows evenly spread over the list (deterministic), or all of them when there are fewer."""
    if n >= len(rows):
        return list(rows)
    step = len(rows) / n
    return [rows[int(i * step)] for i in range(n)]


def load_subset_keys() -> set[tuple[str, str]]:
    with open(STARD_SUBSET_KEYS, encoding="utf-8") as f:
        return {(r["path"], r["article"]) for r in map(json.loads, filter(str.strip, f))}


def load_national():
    """All national LawRefBook articles as `Document`s (category not starting with DLC/)."""
    from agentic_rag.knowledge.corpus import parse_lawrefbook

    return parse_lawrefbook(LAWREFBOOK, national_only=True).checked(LAWREFBOOK, allow_malformed=False)


def fmt(v, width: int = 10, digits: int = 3) -> str:
    if v is None:
        return f"{'-':>{width}}"
    if isinstance(v, float):
        return f"{v:>{width}.{digits}f}"
    return f"{v!s:>{width}}"


def table(headers: Sequence[str], rows: Iterable[Sequence], first_width: int = 34, width: int = 11,
          digits: int = 3) -> str:
    lines = [f"{headers[0]:<{first_width}}" + "".join(f"{h:>{width}}" for h in headers[1:])]
    lines.append("-" * len(lines[0]))
    for row in rows:
        lines.append(f"{row[0]!s:<{first_width}}" + "".join(fmt(v, width, digits) for v in row[1:]))
    return "\n".join(lines)


def run_phase(script: str, name: str, extra: list[str]) -> dict:
    """Run one benchmark phase of `script` in a fresh process (clean RSS, no warm caches shared between phases);
    the phase prints its result as the last JSON line."""
    import subprocess

    cmd = [sys.executable, script, "--phase", name, *extra]
    log(f"\n=== phase {name} (subprocess) ===")
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, cwd=PROJECT_ROOT)
    wall = time.perf_counter() - t0
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    if proc.returncode != 0 or not lines:
        return {"error": f"exit code {proc.returncode}", "wall_s": round(wall, 1)}
    out = json.loads(lines[-1])
    out["wall_s"] = round(wall, 1)
    log(f"=== phase {name} done in {wall:.1f} s, peak RSS {out.get('peak_rss_mb')} MB ===")
    return out


def write_json(path: Path, result: dict, t_start: float) -> None:
    """Checkpoint a benchmark's result (total seconds so far included)."""
    result["total_s"] = round(time.perf_counter() - t_start, 1)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, ensure_ascii=False, indent=2), encoding="utf-8")


def finish(result: dict, report, path: Path | None, t_start: float) -> int:
    """End a benchmark: machine state, the table on stderr (`report(result)`), the JSON file and the JSON line."""
    result["loadavg_end"] = loadavg()
    result["peak_rss_mb"] = peak_rss_mb()
    log("\n" + report(result))
    if path:
        write_json(path, result, t_start)
    print(json.dumps(result, ensure_ascii=False))
    return 0
