
/// Index sets: non-negative integers, unique, in ascending order, in the array part of the table.
/// Membership is a binary search, so they need no extra table.
extension LuaStack {
    /// The value at `index` as an index-set element: a non-negative integer (or an integral float).
    func indexValue(_ index: Int32) -> Int64? {
        guard type(at: index) == .number, let value = toInteger(index), value >= 0 else { return nil }
        return value
    }

    /// How an invalid index-set element is described in errors: "string", "number -1", "number 1.5".
    func describeIndex(_ index: Int32) -> String {
        if type(at: index) == .number, let text = toString(index) { return "number " + text }
        return typeName(at: index)
    }

    /// A dictionary key in errors: `'a'` for a string, the number itself, else its type name.
    func describeKey(_ index: Int32) -> String {
        switch type(at: index) {
        case .string: return "'" + (stringValue(index) ?? "") + "'"
        case .number:
            pushCopy(of: index)
            defer { pop() }
            return toString(-1) ?? "?"
        case .boolean: return toBool(index) ? "true" : "false"
        default: return typeName(at: index)
        }
    }

    /// Replaces the contents of the list at `table` with `indexes`, sorted and without duplicates.
    func writeIndexSet(_ table: Int32, _ indexes: [Int64]) throws(LuaRaise) {
        let table = absolute(table)
        let old = listCount(table)
        var written: Int64 = 0
        var last: Int64 = -1
        for value in indexes.sorted() where value != last {
            written += 1
            push(value)
            rawSet(table, written)
            last = value
            if written & 0xFFF == 0 { try checkMemoryBudget() }
        }
        var clear = written + 1
        while clear <= old {
            pushNil()
            rawSet(table, clear)
            clear += 1
        }
    }

    /// Position of the first element >= `value` in the index set at `table` (1-based; count + 1
    /// when every element is smaller), and whether it equals `value`.
    func indexSetSearch(_ table: Int32, _ value: Int64) -> (position: Int64, found: Bool) {
        var low: Int64 = 1
        var high = rawLength(table) + 1
        while low < high {
            let middle = low + (high - low) / 2
            rawGet(table, middle)
            let element = toInteger(-1) ?? Int64.max
            pop()
            if element < value { low = middle + 1 } else { high = middle }
        }
        rawGet(table, low)
        let found = toInteger(-1) == value && type(at: -1) == .number
        pop()
        return (low, found)
    }

    /// Inserts `value` in order; false when already present.
    @discardableResult
    func indexSetAdd(_ table: Int32, _ value: Int64) -> Bool {
        let table = absolute(table)
        let (position, found) = indexSetSearch(table, value)
        if found { return false }
        var i = listCount(table)
        while i >= position {
            rawGet(table, i)
            rawSet(table, i + 1)
            i -= 1
        }
        push(value)
        rawSet(table, position)
        return true
    }

    /// Removes `value`; false when absent.
    @discardableResult
    func indexSetRemove(_ table: Int32, _ value: Int64) -> Bool {
        let table = absolute(table)
        let (position, found) = indexSetSearch(table, value)
        if !found { return false }
        removePosition(table, position, count: listCount(table))
        return true
    }
}
