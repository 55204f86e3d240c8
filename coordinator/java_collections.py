"""Java collection semantics that Kafka's behaviour silently depends on.

Kafka's coordinator and client assignors iterate ``java.util.HashMap``/``HashSet`` and
``org.apache.kafka.timeline.TimelineHashMap`` in their natural order, and that order leaks into
observable results:

* the member order inside a GroupMetadata record and in the leader's JoinGroup response
  (``ClassicGroup.members`` is a ``HashMap``);
* which member becomes leader when the leader leaves (``ClassicGroup.remove`` takes the first key);
* which protocol wins a tied vote (``ClassicGroup.selectProtocol`` keeps the first maximum);
* the topic order inside range/sticky assignments (``AbstractPartitionAssignor.assign`` builds a
  ``HashMap`` of topics) and therefore the assignment bytes;
* the order of tombstones written by offset expiry and DeleteGroups (``TimelineHashMap``).

To reproduce Kafka byte for byte, these classes reproduce the iteration order of those Java
collections. Both orders are a pure function of (key hash codes, table capacity, insertion order):

* ``java.util.HashMap`` (JDK 17): bucket = ``(h ^ (h >>> 16)) & (capacity - 1)``; buckets are
  visited in index order, each bin in its linked-list order: ``put`` appends new nodes to the bin,
  ``computeIfAbsent`` pushes them at its head, and ``resize`` splits bins preserving relative
  order. Capacity starts at 16 (or ``tableSizeFor`` of the requested initial capacity), doubles when
  ``size > 0.75 * capacity`` (after a ``put``, before a ``computeIfAbsent``), and also doubles when a
  bin grows past 8 nodes while the table is smaller than 64 (``treeifyBin``). Bins are never
  treeified here (that needs 9 colliding keys in a table of 64+); see :data:`JDK_PROFILE` for
  copy-constructor sizing, which changed in JDK 19 (JDK-8281631).
* ``TimelineHashMap`` (``server-common/.../timeline/BaseHashTable.java``): slot = the top bits of
  ``hashCode * -7046029254386353131`` (Fibonacci hashing); capacity starts at 2 and doubles when
  ``(size + 1) * 0.75 > capacity`` before each put; ``SnapshottableHashTable.CurrentIterator`` walks
  slots in index order and each slot's entries in *reverse* insertion order.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, MutableMapping, MutableSet
from typing import Any, Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_INT_MASK = 0xFFFFFFFF
_LONG_MASK = 0xFFFFFFFFFFFFFFFF

#: Which JDK's ``HashMap`` sizing rules to follow. JDK 17 is what this project runs (and what the
#: Java oracle in the tests is compiled with). JDK 19+ changed how ``new HashMap<>(Map)`` and
#: ``new HashSet<>(Collection)`` pre-size their table (JDK-8281631), which can change iteration
#: order of copied maps; set this to 19 to follow the newer rules.
JDK_PROFILE = 17


def to_int32(value: int) -> int:
    """Wrap an integer to Java's signed 32-bit ``int``."""
    value &= _INT_MASK
    return value - (1 << 32) if value & 0x80000000 else value


def java_string_hash(text: str) -> int:
    """``String.hashCode``: ``h = 31 * h + c`` over UTF-16 code units, with int overflow."""
    data = text.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & _INT_MASK
    return to_int32(h)


def java_hash(obj: Any) -> int:
    """The Java ``hashCode()`` of a key: strings, ints (``Integer``) or objects that define
    ``java_hash_code()`` (e.g. :class:`coordinator.topic_partition.TopicPartition`)."""
    if isinstance(obj, str):
        return java_string_hash(obj)
    if isinstance(obj, bool):  # Boolean.hashCode
        return 1231 if obj else 1237
    if isinstance(obj, int):
        return to_int32(obj)
    method = getattr(obj, "java_hash_code", None)
    if method is None:
        raise TypeError(f"no Java hashCode for {type(obj).__name__}")
    return method()


def java_string_key(text: str) -> bytes:
    """Sort key equal to ``String.compareTo``: UTF-16 code-unit order, not code-point order."""
    return text.encode("utf-16-be")


def table_size_for(capacity: int) -> int:
    """``HashMap.tableSizeFor``: the smallest power of two >= capacity (at least 1)."""
    n = 1
    while n < capacity:
        n <<= 1
    return n


def _spread(h: int) -> int:
    h &= _INT_MASK
    return h ^ (h >> 16)


class JavaHashMap(MutableMapping[K, V], Generic[K, V]):
    """A dict whose iteration order is ``java.util.HashMap``'s (see module docstring).

    Bins are kept as explicit lists because their order depends on *how* a key was inserted:
    ``put`` appends a new node to its bin, while ``computeIfAbsent`` pushes it at the head of the
    bin and resizes *before* inserting (``size > threshold``) rather than after.
    """

    _DEFAULT_CAPACITY = 16
    _TREEIFY_THRESHOLD = 8
    _MIN_TREEIFY_CAPACITY = 64

    def __init__(self, initial_capacity: int | None = None, source: Iterable[tuple[K, V]] | None = None):
        self._values: dict[K, V] = {}
        self._hash: dict[K, int] = {}
        self._bins: dict[int, list[K]] = {}
        self._capacity = 0  # 0 = table not allocated yet (Java allocates lazily)
        self._threshold = table_size_for(initial_capacity) if initial_capacity is not None else 0
        self._order: list[K] | None = None
        if source is not None:
            for key, value in source:
                self[key] = value

    @classmethod
    def copy_of(cls, other: MutableMapping[K, V] | JavaHashMap[K, V]) -> JavaHashMap[K, V]:
        """``new HashMap<>(Map m)``: pre-sized from ``m.size()``, then filled in m's order."""
        result: JavaHashMap[K, V] = cls()
        size = len(other)
        if size:
            if JDK_PROFILE >= 19:
                wanted = -(-size * 4 // 3)  # Math.ceil(s / 0.75)
            else:
                wanted = int(size / 0.75 + 1.0)
            if wanted > result._threshold:
                result._threshold = table_size_for(wanted)
        for key in other:
            result[key] = other[key]
        return result

    # -- table mechanics -------------------------------------------------------------------
    def _bucket(self, h: int) -> int:
        return _spread(h) & (self._capacity - 1)

    def _resize(self) -> None:
        """``HashMap.resize``: each bin splits into two, keeping its nodes' relative order."""
        order = list(self) if self._capacity else []
        if self._capacity == 0:
            self._capacity = self._threshold if self._threshold > 0 else self._DEFAULT_CAPACITY
        else:
            self._capacity *= 2
        self._threshold = int(self._capacity * 0.75)
        self._bins = {}
        for key in order:
            self._bins.setdefault(self._bucket(self._hash[key]), []).append(key)
        self._order = None

    def _insert(self, key: K, value: V, at_head: bool) -> None:
        h = java_hash(key)
        bin_ = self._bins.setdefault(self._bucket(h), [])
        bin_size_before = len(bin_)
        self._values[key] = value
        self._hash[key] = h
        if at_head:
            bin_.insert(0, key)
        else:
            bin_.append(key)
        self._order = None
        # treeifyBin resizes instead of treeifying while the table is small. putVal calls it when
        # the bin already held 8 nodes, computeIfAbsent when it held 7 (it counts differently).
        limit = self._TREEIFY_THRESHOLD - 1 if at_head else self._TREEIFY_THRESHOLD
        if bin_size_before >= limit and self._capacity < self._MIN_TREEIFY_CAPACITY:
            self._resize()

    def __setitem__(self, key: K, value: V) -> None:
        """``put``: a new key goes to the tail of its bin; resize after if over the threshold."""
        if key in self._values:
            self._values[key] = value
            return
        if self._capacity == 0:
            self._resize()
        self._insert(key, value, at_head=False)
        if len(self._values) > self._threshold:
            self._resize()

    def compute_if_absent(self, key: K, factory: Callable[[K], V]) -> V:
        """``computeIfAbsent``: resize first if already over the threshold, then insert at the head."""
        if key in self._values:
            return self._values[key]
        if self._capacity == 0 or len(self._values) > self._threshold:
            self._resize()
        self._insert(key, factory(key), at_head=True)
        return self._values[key]

    def __delitem__(self, key: K) -> None:
        del self._values[key]
        h = self._hash.pop(key)
        self._bins[self._bucket(h)].remove(key)
        self._order = None

    def __getitem__(self, key: K) -> V:
        return self._values[key]

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def __len__(self) -> int:
        return len(self._values)

    def __iter__(self) -> Iterator[K]:
        if self._order is None:
            self._order = [k for b in sorted(self._bins) for k in self._bins[b]]
        return iter(list(self._order))

    def __repr__(self) -> str:
        return "JavaHashMap({" + ", ".join(f"{k!r}: {self._values[k]!r}" for k in self) + "})"

    def put_all(self, other: MutableMapping[K, V] | JavaHashMap[K, V]) -> None:
        """``HashMap.putAll`` (JDK 17 ``putMapEntries``)."""
        size = len(other)
        if size:
            if self._capacity == 0:
                wanted = int(size / 0.75 + 1.0) if JDK_PROFILE < 19 else -(-size * 4 // 3)
                if wanted > self._threshold:
                    self._threshold = table_size_for(wanted)
            else:
                while size > self._threshold:
                    self._resize()
        for key in list(other):
            self[key] = other[key]

    @property
    def capacity(self) -> int:
        return self._capacity


class JavaHashSet(MutableSet[K], Generic[K]):
    """A set whose iteration order is ``java.util.HashSet``'s (a ``HashMap`` of keys)."""

    def __init__(self, items: Iterable[K] | None = None, *, initial_capacity: int | None = None, copy: bool = False):
        """``new HashSet<>()``, ``new HashSet<>(int)`` or, with ``copy=True``, ``new HashSet<>(Collection)``."""
        if copy:
            items = list(items or [])
            if JDK_PROFILE >= 19:
                initial_capacity = -(-max(len(items), 12) * 4 // 3)
            else:
                initial_capacity = max(int(len(items) / 0.75) + 1, 16)
        self._map: JavaHashMap[K, bool] = JavaHashMap(initial_capacity)
        for item in items or []:
            self._map[item] = True

    def __contains__(self, item: object) -> bool:
        return item in self._map

    def __iter__(self) -> Iterator[K]:
        return iter(self._map)

    def __len__(self) -> int:
        return len(self._map)

    def add(self, item: K) -> None:
        self._map[item] = True

    def discard(self, item: K) -> None:
        if item in self._map:
            del self._map[item]

    def add_all(self, items: Iterable[K]) -> None:
        """``addAll`` through ``AbstractCollection`` (one ``add`` per element)."""
        for item in items:
            self.add(item)

    def __repr__(self) -> str:
        return "JavaHashSet([" + ", ".join(repr(k) for k in self) + "])"


_FIBONACCI = -7046029254386353131 & _LONG_MASK


def timeline_slot(h: int, capacity: int) -> int:
    """``BaseHashTable.findSlot``: the top ``log2(capacity)`` bits of ``hashCode * 0x9E37...``."""
    log2size = capacity.bit_length()  # 32 - Integer.numberOfLeadingZeros(capacity)
    shift = 65 - log2size
    product = ((h & _LONG_MASK) if h >= 0 else (h + (1 << 64))) * _FIBONACCI & _LONG_MASK
    return product >> shift


class TimelineHashMap(MutableMapping[K, V], Generic[K, V]):
    """A dict whose iteration order is ``org.apache.kafka.timeline.TimelineHashMap``'s, as used for
    the coordinator's groups and committed offsets (``new TimelineHashMap<>(registry, 0)``)."""

    def __init__(self) -> None:
        self._values: dict[K, V] = {}
        self._seq: dict[K, int] = {}
        self._hash: dict[K, int] = {}
        self._next_seq = 0
        self._capacity = 2  # expectedSizeToCapacity(0)
        self._order: list[K] | None = None

    def __setitem__(self, key: K, value: V) -> None:
        # baseAddOrReplace checks the load factor before looking the key up, even on replace.
        if (len(self._values) + 1) * 0.75 > self._capacity:
            self._capacity *= 2
            self._order = None
        if key in self._values:
            self._values[key] = value
            return
        self._values[key] = value
        self._seq[key] = self._next_seq
        self._next_seq += 1
        self._hash[key] = java_hash(key)
        self._order = None

    def __delitem__(self, key: K) -> None:
        del self._values[key]
        del self._seq[key]
        del self._hash[key]
        self._order = None

    def __getitem__(self, key: K) -> V:
        return self._values[key]

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def __len__(self) -> int:
        return len(self._values)

    def __iter__(self) -> Iterator[K]:
        if self._order is None:
            cap = self._capacity
            self._order = sorted(self._values, key=lambda k: (timeline_slot(self._hash[k], cap), -self._seq[k]))
        return iter(list(self._order))

    def compute_if_absent(self, key: K, factory: Callable[[K], V]) -> V:
        if key not in self._values:
            self[key] = factory(key)
        return self._values[key]
