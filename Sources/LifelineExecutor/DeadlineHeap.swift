/// Delayed jobs ordered by deadline (nanoseconds of one clock), earliest on top;
/// jobs with the same deadline leave in the order they came.
struct DeadlineHeap<Job> {
    private struct Entry {
        var deadline: Int64
        var order: UInt64
        var job: Job

        func before(_ other: Entry) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : order < other.order
        }
    }

    private var entries: [Entry] = []
    private var nextOrder: UInt64 = 0

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }
    var earliest: Int64? { entries.first?.deadline }

    mutating func insert(_ job: Job, deadline: Int64) {
        entries.append(Entry(deadline: deadline, order: nextOrder, job: job))
        nextOrder &+= 1
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].before(entries[parent]) else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// The earliest job if its deadline is at or before `now`.
    mutating func popDue(now: Int64) -> Job? {
        guard let first = entries.first, first.deadline <= now else { return nil }
        let last = entries.removeLast()
        guard !entries.isEmpty else { return first.job }
        entries[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < entries.count, entries[left].before(entries[smallest]) { smallest = left }
            if right < entries.count, entries[right].before(entries[smallest]) { smallest = right }
            guard smallest != parent else { break }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
        return first.job
    }
}

/// Jobs ready to run, first in, first out. Removing from the front only moves
/// an index; the array is compacted once the consumed part is the larger half.
struct JobLine<Job> {
    private var items: [Job] = []
    private var head = 0

    var count: Int { items.count - head }
    var isEmpty: Bool { head == items.count }

    mutating func append(_ job: Job) {
        items.append(job)
    }

    mutating func popFirst() -> Job? {
        guard head < items.count else { return nil }
        let job = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        return job
    }
}
