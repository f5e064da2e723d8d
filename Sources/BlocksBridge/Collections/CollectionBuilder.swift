
/// Builds a helper's result collection on the stack: the new table, and for sets its membership
/// table just above it.
struct CollectionBuilder {
    let stack: LuaStack
    let kind: CollectionKind
    /// Stack index of the new collection.
    let table: Int32
    /// Stack index of its membership table (sets), else 0.
    let members: Int32
    private(set) var count: Int64 = 0

    /// Pushes a new empty collection of `kind` (and its membership table for sets).
    init(_ stack: LuaStack, kind: CollectionKind, arrayCount: Int32 = 0) {
        self.stack = stack
        self.kind = kind
        stack.pushNewCollection(kind, arrayCount: kind.isList ? arrayCount : 0,
                                recordCount: kind.isList ? 0 : arrayCount)
        table = stack.top
        if kind.hasMembership {
            stack.pushMembers(of: table)
            members = stack.top
        } else {
            members = 0
        }
    }

    /// Appends the value at `value`, known to be new (it comes from a collection of the same kind).
    @inline(__always)
    mutating func appendUnique(_ value: Int32) {
        count += 1
        stack.pushCopy(of: value)
        stack.rawSet(table, count)
        if members != 0, !stack.isNaN(value) {
            stack.pushCopy(of: value)
            stack.push(true)
            stack.rawSet(members)
        }
    }

    /// `result[key] = value` for dictionary results (stack slots).
    @inline(__always)
    func set(key: Int32, value: Int32) {
        stack.pushCopy(of: key)
        stack.pushCopy(of: value)
        stack.rawSet(table)
    }

    /// Keeps an entry of the source collection (select / reject).
    @inline(__always)
    mutating func keep(_ entry: LuaEntry) {
        if entry.key != 0 { set(key: entry.key, value: entry.value) } else { appendUnique(entry.value) }
    }

    /// Leaves only the collection on the stack above where it was pushed.
    func finish() {
        stack.top = table
    }
}
