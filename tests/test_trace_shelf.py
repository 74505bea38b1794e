"""Traces uploaded for a stored dump: kept beside it by content under the link they were
uploaded under (not another link to the same bytes), counted against the store's quota,
gone with the dump."""

from __future__ import annotations

import glob
import hashlib
import json
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


def test_another_process_sees_the_links_traces(stored, tmp_path):
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


def test_a_trace_belongs_to_the_link_it_was_uploaded_under(tmp_path):
    """Issue 33, item 1: visitor A's trace showed under visitor B's own link to the same
    bytes (traces hung on the dump's hash). Now A's is A's; B's upload of it is B's."""
    store = Store(str(tmp_path / "data"))
    a = store.add_path(sample("transformer"), holds=[])
    b = store.add_path(sample("transformer"), holds=[])
    assert a.hash == b.hash and a.share_id != b.share_id
    shelf = TraceShelf(store)
    data = trace_bytes()
    t = shelf.add(a.share_id, "perfetto_trace.json.gz", data)
    assert [x.id for x in shelf.list(a.share_id)] == [t.id]
    assert shelf.read(a.share_id, t.id) == data
    assert shelf.list(b.share_id) == []
    with pytest.raises(StoreError, match="not stored with this dump"):
        shelf.read(b.share_id, t.id)          # a link naming A's trace gets nothing of it
    mine = shelf.add(b.share_id, "mine.json.gz", data)
    shelf.remove(b.share_id, mine.id)
    assert shelf.list(b.share_id) == [] and [x.id for x in shelf.list(a.share_id)] == [t.id]


def test_traces_shelved_before_links_kept_them_show_under_every_link(tmp_path):
    """A trace shelved by the earlier layout (``traces/<hash>/<id>.*``, for every link)
    stays listed and readable under every link to the dump, as it was."""
    store = Store(str(tmp_path / "data"))
    a = store.add_path(sample("transformer"), holds=[])
    b = store.add_path(sample("transformer"), holds=[])
    data = trace_bytes()
    tid = trace_id(data)
    old = os.path.join(store.base, "traces", a.hash)
    os.makedirs(old)
    with open(os.path.join(old, tid + ".bin"), "wb") as f:
        f.write(data)
    with open(os.path.join(old, tid + ".json"), "w") as f:
        json.dump({"id": tid, "name": "old.json.gz", "size": len(data),
                   "sha256": hashlib.sha256(data).hexdigest(), "uploaded_at": 1.0}, f)
    shelf = TraceShelf(store)
    for link in (a.share_id, b.share_id):
        assert [(x.id, x.name) for x in shelf.list(link)] == [(tid, "old.json.gz")]
        assert shelf.read(link, tid) == data


def test_a_full_store_refuses_a_trace_naming_its_quota(tmp_path):
    """Issue 33, item 6: a 58 MB trace went into a full store (the shelf never looked at
    the quota). Every byte it writes counts now, and a dump past the quota is refused
    with the trace's bytes counted."""
    roomy = Store(str(tmp_path / "data"))
    d = roomy.add_path(sample("cond_switch"))
    before = roomy.used_bytes()
    data = trace_bytes()
    TraceShelf(roomy).add(d.share_id, "a.json.gz", data)
    # what the shelf wrote, as the file system holds it (blocks, folders too: the quota
    # counts what a store takes on disk)
    shelf = os.path.join(roomy.base, "traces")
    written = sum(os.lstat(os.path.join(root, n)).st_blocks * 512
                  for root, dirs, files in os.walk(shelf) for n in dirs + files)
    assert roomy.used_bytes() == before + written and written > len(data)
    full = Store(roomy.location, quota_bytes=roomy.used_bytes() + 1000)
    with pytest.raises(StoreError) as e:
        TraceShelf(full).add(d.share_id, "b.json.gz", trace_bytes("scan_while"))
    message = str(e.value)
    assert message.startswith("b.json.gz: the store is full") and "this trace has" in message
    assert f"{full.quota_bytes:,}-byte quota" in message and "HLOLENS_STORE_QUOTA" in message
    assert [t.name for t in TraceShelf(full).list(d.share_id)] == ["a.json.gz"]
