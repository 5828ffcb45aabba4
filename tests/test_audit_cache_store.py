"""The audit cache's writes (audit.cache.store): an entry reads back equal, its folder is made on
the first write, no temporary file is left behind, and a temporary file a dead writer of the same
process and thread left makes that one write skip (never a half entry) and is gone for the next."""
import os
import threading

from verilayout.audit import cache
from verilayout.audit.model import Check, FileReport


def report(n: int) -> FileReport:
    return FileReport("k.ptx", "sm_90a", 4, tuple(Check("wgmma.mma_async", i, None, "mma-descriptor",
                                                          "proved", None, f"ok {i}") for i in range(n)))


def files_under(folder) -> list[str]:
    return sorted(os.path.relpath(os.path.join(d, f), folder) for d, _, fs in os.walk(folder) for f in fs)


def test_an_entry_reads_back_and_leaves_only_itself(tmp_path):
    k = "ab" * 32
    cache.store(str(tmp_path / "new"), k, report(3))
    assert cache.load(str(tmp_path / "new"), k) == report(3)
    assert files_under(tmp_path / "new") == [os.path.join("ab", k + ".json")]
    cache.store(str(tmp_path / "new"), k, report(5))            # rewritten in place
    assert cache.load(str(tmp_path / "new"), k) == report(5)
    assert files_under(tmp_path / "new") == [os.path.join("ab", k + ".json")]


def test_a_left_temporary_file_skips_one_write_then_is_gone(tmp_path):
    k = "cd" * 32
    entry = tmp_path / "cd" / (k + ".json")
    entry.parent.mkdir()
    stale = f"{entry}.{os.getpid()}.{threading.get_ident()}.tmp"
    open(stale, "w").write("{half")
    cache.store(str(tmp_path), k, report(1))
    assert cache.load(str(tmp_path), k) is None and not os.path.exists(stale)
    cache.store(str(tmp_path), k, report(1))
    assert cache.load(str(tmp_path), k) == report(1) and files_under(tmp_path) == [os.path.join("cd", k + ".json")]
