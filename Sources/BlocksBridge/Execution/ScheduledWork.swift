/// Something waiting on the loop's timer heap: a delayed block or a timer.
///
/// The heap orders by (deadline, sequence): equal deadlines keep submission order. Every field is
/// guarded by the loop's mutex.
public class ScheduledWork: @unchecked Sendable {
    var deadline: UInt64 = 0
    var sequence: UInt64 = 0
    /// Position on the heap, -1 when not on it (so cancelling removes it at once, in O(log n)).
    var heapIndex = -1
    /// False after `unref()`: it still runs while the loop runs, but does not keep it alive.
    var referenced = true

    init() {}

    @inline(__always) func precedes(_ other: ScheduledWork) -> Bool {
        deadline < other.deadline || (deadline == other.deadline && sequence < other.sequence)
    }
}

/// A binary min-heap of scheduled work that knows each item's position.
///
/// Entries carry their keys (comparisons never touch the objects) and an unmanaged +1 reference
/// (moving entries costs no reference counting): the heap is the loop's hot path.
struct TimerHeap {
    private struct Entry {
        let deadline: UInt64
        let sequence: UInt64
        let work: Unmanaged<ScheduledWork>

        @inline(__always) func precedes(_ other: Entry) -> Bool {
            deadline < other.deadline || (deadline == other.deadline && sequence < other.sequence)
        }
    }

    private var entries: [Entry] = []
    /// Entries whose work is unreferenced (`unref()`): they do not keep the loop alive.
    private(set) var unreferenced = 0

    var count: Int { entries.count }
    /// Entries that keep the loop alive.
    var referencedCount: Int { entries.count - unreferenced }

    /// Changes whether `work` keeps the loop alive, counting it if it is on the heap.
    mutating func setReferenced(_ work: ScheduledWork, _ referenced: Bool) {
        guard work.referenced != referenced else { return }
        work.referenced = referenced
        if work.heapIndex >= 0 { unreferenced += referenced ? -1 : 1 }
    }
    var first: ScheduledWork? { entries.first?.work.takeUnretainedValue() }
    var firstDeadline: UInt64? { entries.first?.deadline }
    /// The scheduled work, in no particular order.
    var items: [ScheduledWork] { entries.map { $0.work.takeUnretainedValue() } }

    /// Adds `work` with its current `deadline` and `sequence`.
    mutating func insert(_ work: ScheduledWork) {
        entries.append(Entry(deadline: work.deadline, sequence: work.sequence, work: .passRetained(work)))
        if !work.referenced { unreferenced += 1 }
        siftUp(entries.count - 1)
    }

    /// Removes `work` if it is on this heap. The caller keeps `work` alive (its deinit must not
    /// run here, where the loop's mutex may be held).
    mutating func remove(_ work: ScheduledWork) {
        let index = work.heapIndex
        guard index >= 0, index < entries.count, entries[index].work.toOpaque() == Unmanaged.passUnretained(work).toOpaque()
        else { return }
        let last = entries.removeLast()
        if index < entries.count {
            place(last, at: index)
            siftDown(index)
            siftUp(index)
        }
        work.heapIndex = -1
        if !work.referenced { unreferenced -= 1 }
        Unmanaged.passUnretained(work).release()
    }

    mutating func removeAll() {
        for entry in entries {
            entry.work._withUnsafeGuaranteedRef { $0.heapIndex = -1 }
            entry.work.release()
        }
        entries.removeAll()
        unreferenced = 0
    }

    @inline(__always) private mutating func place(_ entry: Entry, at index: Int) {
        entries[index] = entry
        entry.work._withUnsafeGuaranteedRef { $0.heapIndex = index }
    }

    private mutating func siftUp(_ start: Int) {
        let entry = entries[start]
        var index = start
        while index > 0 {
            let parent = (index - 1) / 2
            guard entry.precedes(entries[parent]) else { break }
            place(entries[parent], at: index)
            index = parent
        }
        place(entry, at: index)
    }

    private mutating func siftDown(_ start: Int) {
        let entry = entries[start]
        let count = entries.count
        var index = start
        while true {
            let left = 2 * index + 1
            guard left < count else { break }
            var child = left
            let right = left + 1
            if right < count, entries[right].precedes(entries[left]) { child = right }
            guard entries[child].precedes(entry) else { break }
            place(entries[child], at: index)
            index = child
        }
        place(entry, at: index)
    }
}
