"""Traces uploaded for a stored dump: kept beside it by content, listed for every link to
it, gone with it."""

from __future__ import annotations

import glob
import os

import pytest
from conftest import sample

from compiler_bridge.dumps import Store, StoreError
from compiler_bridge.dumps import TraceShelf, is_trace_id, trace_id


def trace_bytes(name: str = "transformer") -> bytes:
    pattern = os.path.join(sample(name), "trace/plugins/profile/*/perfetto_trace.json.gz")
    path = glob.glob(pattern)[0]
    with open(path, "rb") as f:
        return f.read()


@pytest.fixture
def stored(tmp_path):
    store = Store(str(tmp_path / "data"))
    return store, store.add_path(sample("cond_switch"))


def test_a_trace_is_kept_once_per_content_and_read_back(stored):
    store, d = stored
    shelf = TraceShelf(store)
    data = trace_bytes()
    first = shelf.add(d.share_id, "perfetto_trace.json.gz", data)
    again = shelf.add(d.share_id, "renamed.json.gz", data)
    assert first == again and first.id == trace_id(data) and is_trace_id(first.id)
    assert first.size == len(data) and first.name == "perfetto_trace.json.gz"
    assert shelf.read(d.share_id, first.id) == data
    assert [t.id for t in shelf.list(d.share_id)] == [first.id]


def test_every_share_id_of_the_dump_sees_its_traces(stored, tmp_path):
    store, d = stored
    shelf = TraceShelf(store)
    t = shelf.add(d.share_id, "a.trace.json.gz", trace_bytes())
    # a second Store object on the same data folder (another app process)
    other = TraceShelf(Store(store.location))
    assert [x.id for x in other.list(d.share_id)] == [t.id]


def test_newest_first_and_names_are_file_names_only(stored):
    store, d = stored
    shelf = TraceShelf(store)
    a = shelf.add(d.share_id, "../../etc/a.json.gz", trace_bytes("transformer"))
    b = shelf.add(d.share_id, "b.json.gz", trace_bytes("scan_while"))
    assert a.name == "a.json.gz"
    assert [t.id for t in shelf.list(d.share_id)] == [b.id, a.id]


def test_unknown_and_malformed_ids_are_store_errors(stored):
    store, d = stored
    shelf = TraceShelf(store)
    with pytest.raises(StoreError, match="not stored"):
        shelf.get(d.share_id, "0" * 16)
    with pytest.raises(StoreError, match="not a trace id"):
        shelf.read(d.share_id, "../../manifests/x")
    with pytest.raises(StoreError, match="empty"):
        shelf.add(d.share_id, "x.json.gz", b"")
    with pytest.raises(StoreError):
        shelf.list("no-such-share-id")


def test_removing_a_trace_and_the_dump(stored):
    store, d = stored
    shelf = TraceShelf(store)
    t = shelf.add(d.share_id, "a.json.gz", trace_bytes())
    shelf.remove(d.share_id, t.id)
    assert shelf.list(d.share_id) == []
    t = shelf.add(d.share_id, "a.json.gz", trace_bytes())
    folder = os.path.join(store.base, "traces", store.resolve(d.share_id))
    assert os.path.isdir(folder)
    store.remove(d.share_id)
    assert not os.path.exists(folder)
