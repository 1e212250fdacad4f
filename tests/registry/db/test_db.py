"""SQLite writers queue on one lock across threads and processes; WAL checkpoints run in the background."""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from multiprocessing.process import BaseProcess
from pathlib import Path

import pytest
from sqlalchemy import text

from registry.container import build_services
from registry.db import WalCheckpointer, WriterLock, make_engine, queue_claims, writer_lock
from registry.migrate import upgrade
from registry.schema import Agent
from registry.settings import Settings
from tests.support.cards import make_card

DEADLINE = 10.0


def _wait_until(condition: Callable[[], bool], what: str, deadline: float = DEADLINE) -> None:
    end = time.monotonic() + deadline
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {deadline} s waiting until {what}")
        time.sleep(0.02)


def _checkpointer_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "wal-checkpointer" and t.is_alive()}


def _in_database_file(path: Path, sql: str) -> object:
    """What `sql` returns from the database file alone, ignoring the WAL (None if it cannot be read
    yet): rows are there only once a checkpoint has copied them out of the WAL."""
    connection = sqlite3.connect(f"file:{path.resolve()}?immutable=1", uri=True)
    try:
        return connection.execute(sql).fetchone()[0]
    except sqlite3.DatabaseError:  # no such table yet, or caught mid-copy
        return None
    finally:
        connection.close()


# -- writer_lock ------------------------------------------------------------------------------


def _take_turns(url: str, log: str, counter: str, rounds: int, start: threading.Barrier) -> None:
    """Child process: take turns on the writer lock of a new engine for `url`."""
    _take_turns_on(writer_lock(make_engine(url)), log, counter, rounds, start)


def _take_turns_on(lock: WriterLock, log: str, counter: str, rounds: int, start: threading.Barrier) -> None:
    """Child process: two threads each enter `lock` `rounds` times, marking entry and exit in a
    shared log and bumping a shared counter with a read-modify-write that loses updates if two
    holders overlap."""
    start.wait(60)
    failures: list[BaseException] = []

    def turns() -> None:
        me = f"{os.getpid()}-{threading.get_ident()}"
        try:
            for _ in range(rounds):
                with lock.hold():
                    with open(log, "a") as marks:
                        marks.write(f"enter {me}\n")
                    count = Path(counter)
                    count.write_text(str(int(count.read_text() or 0) + 1))  # empty: caught mid-write
                    with open(log, "a") as marks:
                        marks.write(f"exit {me}\n")
        except BaseException as error:
            failures.append(error)
            raise

    threads = [threading.Thread(target=turns) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise SystemExit(1)  # the parent checks the exit code


def test_writer_lock_lets_one_holder_in_at_a_time_across_processes_and_threads(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    log, counter = tmp_path / "turns.log", tmp_path / "counter"
    counter.write_text("0")
    rounds, processes = 150, 2
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(processes)
    _run_children(
        [
            context.Process(target=_take_turns, args=(url, str(log), str(counter), rounds, start))
            for _ in range(processes)
        ]
    )
    _assert_one_holder_at_a_time(log, counter, processes * 2 * rounds)
    assert (tmp_path / "shared.db-writer.lock").exists()


def _run_children(children: list[BaseProcess]) -> None:
    for child in children:
        child.start()
    for child in children:
        child.join(120)
        if child.is_alive():
            child.kill()
    assert [child.exitcode for child in children] == [0] * len(children)


def _assert_one_holder_at_a_time(log: Path, counter: Path, expected_turns: int) -> None:
    marks = log.read_text().splitlines()
    turns = len(marks) // 2
    assert turns == expected_turns
    for entry, leave in zip(marks[::2], marks[1::2]):
        assert entry.startswith("enter ") and leave == "exit " + entry.removeprefix("enter "), (entry, leave)
    assert int(counter.read_text()) == turns  # no update lost to an overlapping holder
    assert len({mark.split()[1].split("-")[0] for mark in marks}) > 1  # more than one process took turns


def test_writer_lock_still_excludes_processes_forked_after_it_was_used(tmp_path: Path):
    engine = make_engine(f"sqlite:///{tmp_path / 'preloaded.db'}")
    lock = writer_lock(engine)
    with lock.hold():  # e.g. a write in a server's master process before it forks its workers
        pass
    log, counter = tmp_path / "turns.log", tmp_path / "counter"
    counter.write_text("0")
    context = multiprocessing.get_context("fork")
    start = context.Barrier(2)
    _run_children(
        [context.Process(target=_take_turns_on, args=(lock, str(log), str(counter), 150, start)) for _ in range(2)]
    )
    _assert_one_holder_at_a_time(log, counter, 2 * 2 * 150)


def test_writer_lock_is_one_per_engine():
    engine = make_engine("sqlite://")
    assert writer_lock(engine) is writer_lock(engine)
    assert writer_lock(engine) is not writer_lock(make_engine("sqlite://"))


def _holders_at_once(url: str, patience: float) -> int:
    """How many threads get inside `writer_lock(...).hold()` at the same time (2 if it excludes
    nothing); the first waits up to `patience` seconds inside for the second."""
    lock = writer_lock(make_engine(url))
    inside = threading.Barrier(2, timeout=patience)
    met: list[bool] = []

    def hold() -> None:
        with lock.hold():
            try:
                inside.wait()  # both threads must be inside at once to pass
                met.append(True)
            except threading.BrokenBarrierError:
                met.append(False)

    threads = [threading.Thread(target=hold) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(DEADLINE)
    return 2 if met == [True, True] else 1


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_writer_lock_does_nothing_for_in_memory_sqlite(url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    assert _holders_at_once(url, patience=DEADLINE) == 2
    assert list(tmp_path.iterdir()) == []  # no lock file anywhere it could have gone


def test_writer_lock_excludes_threads_on_a_sqlite_file(tmp_path: Path):
    assert _holders_at_once(f"sqlite:///{tmp_path / 'file.db'}", patience=0.5) == 1


def test_writer_lock_does_nothing_on_postgresql(database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    if not database_url.startswith("postgresql"):
        pytest.skip("needs AGENTDEX_TEST_DATABASE_URL pointing at PostgreSQL")
    monkeypatch.chdir(tmp_path)
    assert _holders_at_once(database_url, patience=DEADLINE) == 2
    assert list(tmp_path.iterdir()) == []


# -- WalCheckpointer --------------------------------------------------------------------------


def _wal_writer(path: Path) -> sqlite3.Connection:
    """A connection that never checkpoints itself, and stays open so the WAL is not folded in on close."""
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA wal_autocheckpoint=0")
    connection.execute("CREATE TABLE IF NOT EXISTS rows (body BLOB)")
    return connection


def _commit_rows(connection: sqlite3.Connection, count: int) -> None:
    connection.execute("BEGIN")
    connection.executemany("INSERT INTO rows VALUES (?)", [(os.urandom(1000),) for _ in range(count)])
    connection.execute("COMMIT")


def test_checkpointer_copies_committed_wal_pages_into_the_database_and_stops_promptly(tmp_path: Path):
    path = tmp_path / "wal.db"
    writer = _wal_writer(path)
    try:
        _commit_rows(writer, 2000)  # ~500 pages, left in the WAL
        wal = path.with_name("wal.db-wal")
        assert wal.stat().st_size > 1_000_000
        assert _in_database_file(path, "SELECT count(*) FROM rows") is None

        before = _checkpointer_threads()
        checkpointer = WalCheckpointer(path).start()
        try:
            _wait_until(
                lambda: _in_database_file(path, "SELECT count(*) FROM rows") == 2000,
                "the committed rows are in the database file",
            )
            # Checkpointed frames are reused: more commits of the same size do not grow the WAL.
            wal_size = wal.stat().st_size
            for total in (4000, 6000, 8000):
                _commit_rows(writer, 2000)
                _wait_until(
                    lambda total=total: _in_database_file(path, "SELECT count(*) FROM rows") == total,
                    f"{total} rows are in the database file",
                )
            # Unchecked it would be 4x by now. A commit that lands while a checkpoint is running
            # appends instead of restarting the WAL, so two batches (plus headers) can be in it.
            assert wal.stat().st_size < 3 * wal_size
            (thread,) = _checkpointer_threads() - before
        finally:
            started = time.monotonic()
            checkpointer.stop()
            stopped_in = time.monotonic() - started
        assert stopped_in < 1.0  # not the 5 s join timeout
        assert not thread.is_alive()
    finally:
        writer.close()


def test_checkpointer_that_never_started_stops_at_once(tmp_path: Path):
    WalCheckpointer(tmp_path / "never.db").stop()


# -- build_services(long_running=True) --------------------------------------------------------


@pytest.fixture
def sqlite_file_settings(settings: Settings, tmp_path: Path) -> Settings:
    url = f"sqlite:///{tmp_path / 'agentdex.db'}"
    engine = make_engine(url)
    upgrade(engine)
    engine.dispose()
    return dataclasses.replace(settings, database_url=url)


def _autocheckpoint_pages(services) -> int:  # type: ignore[no-untyped-def]
    with services.engine.connect() as conn:
        return conn.execute(text("PRAGMA wal_autocheckpoint")).scalar_one()


def test_long_running_services_checkpoint_registrations_in_the_background(sqlite_file_settings: Settings):
    before = _checkpointer_threads()
    services = build_services(sqlite_file_settings, long_running=True)
    try:
        (thread,) = _checkpointer_threads() - before
        assert _autocheckpoint_pages(services) == 10_000  # commits only checkpoint as a backstop
        actor = services.tokens.authenticate(services.tokens.create("alice", ["agents:write"]).token)
        services.catalog.register_card(actor, make_card("Checkpointed Agent"), "https://checkpointed.example/card.json")
        database_file = Path(sqlite_file_settings.database_url.removeprefix("sqlite:///"))
        _wait_until(
            lambda: _in_database_file(database_file, f"SELECT count(*) FROM {Agent.__tablename__}") == 1,
            "the registration is checkpointed into the database file",
        )
    finally:
        services.close()
    assert not thread.is_alive()


def test_short_lived_services_leave_checkpoints_to_sqlite(sqlite_file_settings: Settings):
    before = _checkpointer_threads()
    services = build_services(sqlite_file_settings)
    try:
        assert services.checkpointer is None
        assert _checkpointer_threads() == before
        assert _autocheckpoint_pages(services) == 1000  # SQLite's default
    finally:
        services.close()


def test_long_running_services_on_postgresql_run_no_checkpointer(settings: Settings):
    if not settings.database_url.startswith("postgresql"):
        pytest.skip("needs AGENTDEX_TEST_DATABASE_URL pointing at PostgreSQL")
    before = _checkpointer_threads()
    services = build_services(settings, long_running=True)
    try:
        assert services.checkpointer is None
        assert _checkpointer_threads() == before
    finally:
        services.close()


# -- queue_claims -----------------------------------------------------------------------------


def test_queue_claims_plan_no_bitmap_scans_on_postgresql_and_leave_the_main_engine_alone(database_url: str):
    engine = make_engine(database_url)
    claims = queue_claims(engine)
    try:
        if not database_url.startswith("postgresql"):
            assert claims is engine  # SQLite has no bitmap scans, and one writer
            return
        with claims.connect() as conn:
            assert conn.exec_driver_sql("SHOW enable_bitmapscan").scalar() == "off"
        with engine.connect() as conn:
            assert conn.exec_driver_sql("SHOW enable_bitmapscan").scalar() == "on"  # search needs them (GIN)
    finally:
        claims.dispose()
        engine.dispose()
