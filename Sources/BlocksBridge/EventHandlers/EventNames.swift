/// The `events` argument of the event handler functions: one event name, a list of names or
/// a set of them (`{touchUpInside = true}`).
enum EventNames {
    /// Pushes a set `{name = true, ...}` of the events at `index`; returns how many there are.
    @discardableResult
    static func pushSet(_ stack: LuaStack, at index: Int32) throws(LuaRaise) -> Int {
        switch stack.type(at: index) {
        case .string:
            stack.pushNewTable(recordCount: 1)
            stack.pushCopy(of: index)
            stack.push(true)
            stack.rawSet(-3)
            return 1
        case .table:
            // A list of names ({"a", "b"}) or a set of them ({a = true, b = true}; false: left out).
            let count = stack.listCount(index)
            stack.pushNewTable(recordCount: Int32(clamping: count))
            let set = stack.top
            var names = 0
            stack.pushNil()
            while stack.next(index) {
                let name: Int32
                if stack.type(at: -2) == .number, stack.isInteger(-2), let i = stack.toInteger(-2), i >= 1, i <= count,
                   stack.type(at: -1) == .string {
                    name = -1
                } else if stack.type(at: -2) == .string, stack.type(at: -1) == .boolean {
                    name = -2
                    if !stack.toBool(-1) { stack.pop(); continue }
                } else {
                    stack.top = set - 1
                    throw .argument(index, "event names must be strings (a list of names, or names = true)")
                }
                stack.pushCopy(of: name)
                stack.push(true)
                stack.rawSet(set)
                stack.pop()
                names += 1
            }
            return names
        default:
            throw .type(index, expected: "string or table")
        }
    }
}
