/// Something waiting on the loop's timer heap: a delayed block or a timer.
///
/// The heap orders by (deadline, sequence): equal deadlines keep submission order. Every field is
/// guarded by the loop's mutex.
public class ScheduledWork: @unchecked Sendable {
    var deadline: UInt64 = 0
    var sequence: UInt64 = 0
    /// Position on the heap, -1 when not on it (so cancelling removes it at once, in O(log n)).
    var heapIndex = -1

    init() {}

    @inline(__always) func precedes(_ other: ScheduledWork) -> Bool {
        deadline < other.deadline || (deadline == other.deadline && sequence < other.sequence)
    }
}

/// A binary min-heap of scheduled work that knows each item's position.
struct TimerHeap {
    private(set) var items: [ScheduledWork] = []

    var count: Int { items.count }
    var first: ScheduledWork? { items.first }

    mutating func insert(_ work: ScheduledWork) {
        work.heapIndex = items.count
        items.append(work)
        siftUp(items.count - 1)
    }

    /// Removes `work` if it is on this heap.
    mutating func remove(_ work: ScheduledWork) {
        let index = work.heapIndex
        guard index >= 0, index < items.count, items[index] === work else { return }
        let last = items.count - 1
        if index != last {
            swapAt(index, last)
        }
        items.removeLast()
        work.heapIndex = -1
        if index < items.count {
            siftDown(index)
            siftUp(index)
        }
    }

    mutating func popFirst() -> ScheduledWork? {
        guard let first = items.first else { return nil }
        remove(first)
        return first
    }

    mutating func removeAll() {
        for work in items { work.heapIndex = -1 }
        items.removeAll()
    }

    private mutating func swapAt(_ i: Int, _ j: Int) {
        items.swapAt(i, j)
        items[i].heapIndex = i
        items[j].heapIndex = j
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child].precedes(items[parent]) else { return }
            swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        let count = items.count
        while true {
            let left = 2 * parent + 1
            guard left < count else { return }
            var smallest = left
            let right = left + 1
            if right < count, items[right].precedes(items[left]) { smallest = right }
            guard items[smallest].precedes(items[parent]) else { return }
            swapAt(smallest, parent)
            parent = smallest
        }
    }
}
